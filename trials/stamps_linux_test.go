//go:build linux

package trials

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStampKeeper: once the keeper has run, a socket opened afterwards
// (as the agent opens one per trial) has its first datagram stamped on
// arrival, not when it is read 5 ms later, every time: opening and closing
// stamping sockets never turns the kernel's switch off.
func TestStampKeeper(t *testing.T) {
	stampKeeper()
	if keptStampSocket == nil {
		t.Skip("no loopback here: the keeper is best effort")
	}
	for i := range 20 {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := c.SyscallConn()
		rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) })
		sent := time.Now()
		if _, err := c.WriteToUDPAddrPort([]byte("x"), c.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		buf, oob := make([]byte, 16), make([]byte, 128)
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, oobn, _, _, err := c.ReadMsgUDPAddrPort(buf, oob)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		ts, _, ok, _ := parseUDPControl(oob[:oobn])
		if d := time.Duration(ts - sent.UnixNano()); !ok || d > 4*time.Millisecond {
			t.Fatalf("socket %d: stamp %v after the send (present %v): stamped when read, not on arrival", i, d, ok)
		}
	}
}
