package lab

import (
	"fmt"
	"unsafe"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/sys/unix"
)

// ifreqPtr is struct ifreq with its union holding a pointer (ifr_data).
type ifreqPtr struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd, data uint32
}

// disableOffloads turns off checksum, segmentation and scatter-gather
// offloads of ifname inside ns, so every frame a kernel socket sends on a
// tester port is a real, checksummed, MTU-sized frame (as on a wire). The
// relay forwards frames as it reads them; with offloads on, it would read
// UDP/TCP checksums that were never filled in and 64 KB TSO/GSO frames.
func disableOffloads(ns, ifname string) error {
	return nsutil.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		for _, c := range []struct {
			cmd  uint32
			what string
		}{{unix.ETHTOOL_STSO, "tso"}, {unix.ETHTOOL_SGSO, "gso"}, {unix.ETHTOOL_STXCSUM, "tx checksum"}, {unix.ETHTOOL_SSG, "scatter-gather"}} {
			ev := ethtoolValue{cmd: c.cmd}
			var ifr ifreqPtr
			copy(ifr.name[:], ifname)
			ifr.data = unsafe.Pointer(&ev)
			if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
				return fmt.Errorf("turn off %s offload on %s in %s: %w", c.what, ifname, ns, errno)
			}
		}
		return nil
	})
}
