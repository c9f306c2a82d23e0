package agent

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// outOfOrder is how many segments the kernel has received out of order
// on nc's TCP connection (TCP_INFO rcv_ooopack): data the peer sent that
// waits behind a segment the path lost, until TCP retransmits it. ok is
// false when nc is not TCP or the kernel does not say.
func outOfOrder(nc net.Conn) (n uint32, ok bool) {
	sc, isSC := nc.(syscall.Conn)
	if !isSC {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || gerr != nil || info == nil {
		return 0, false
	}
	return info.Rcv_ooopack, true
}
