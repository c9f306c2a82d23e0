//go:build linux

package trials

import (
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Software receive timestamps (SO_TIMESTAMPNS) are one switch for the whole
// kernel: the first socket asking for them turns it on in a work item that
// runs later, and the last one closing turns it off. While it is off a
// datagram is stamped when it is read instead of when it arrived, so a
// reader behind stamps a whole queue in a bunch and every latency includes
// the reader's lag (a lab test read 439.82 Mbit/s for a 200 Mbit/s shaper
// that way, with another process keeping a CPU busy, 2026-12-02; the agent
// opens its receive socket per trial). stampKeeper holds a stamping socket
// on loopback for the life of the process, so trials' sockets opening and
// closing never turn the switch off, and waits once, up to a second, until
// a datagram it sends itself comes back stamped on arrival. It is best
// effort: without loopback it keeps the socket and returns at once.
var stampKeeper = sync.OnceFunc(func() {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return
	}
	keptStampSocket = c
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return
	}
	stampsOnArrival(c, time.Second)
})

// keptStampSocket is stampKeeper's socket, never closed.
var keptStampSocket *net.UDPConn

// stampsOnArrival sends c datagrams to itself until one comes back stamped
// within 500 µs of its send (stamped on arrival, not when read 1 ms later),
// for up to limit.
func stampsOnArrival(c *net.UDPConn, limit time.Duration) {
	to := c.LocalAddr().(*net.UDPAddr).AddrPort()
	buf, oob := make([]byte, 16), make([]byte, udpOOBLen)
	defer c.SetReadDeadline(time.Time{})
	for end := time.Now().Add(limit); time.Now().Before(end); {
		sent := time.Now()
		if _, err := c.WriteToUDPAddrPort([]byte("stamp?"), to); err != nil {
			return
		}
		time.Sleep(time.Millisecond)
		c.SetReadDeadline(time.Now().Add(limit))
		_, oobn, _, _, err := c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			return
		}
		if ts, _, ok, _ := parseUDPControl(oob[:oobn]); ok && ts-sent.UnixNano() < int64(500*time.Microsecond) {
			return
		}
	}
}
