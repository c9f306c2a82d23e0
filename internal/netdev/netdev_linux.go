package netdev

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// Inspect looks interface ifname up in network namespace ns: that it
// exists, its MTU, driver and speed, and whether the namespace's default
// route leaves through it. It sends nothing. A missing namespace or
// interface gives ErrNoNamespace or ErrNoInterface; a namespace that may
// not be opened an error wrapping os.ErrPermission.
func Inspect(ns, ifname string) (Info, error) {
	var info Info
	h, err := handle(ns)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return info, fmt.Errorf("%s: %w", where(ns), ErrNoNamespace)
		}
		return info, fmt.Errorf("open %s: %w", where(ns), err)
	}
	defer h.Close()
	link, err := h.LinkByName(ifname)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return info, fmt.Errorf("%s: %w in %s", ifname, ErrNoInterface, where(ns))
		}
		return info, fmt.Errorf("look up interface %s in %s: %w", ifname, where(ns), err)
	}
	attrs := link.Attrs()
	info.Index = attrs.Index
	info.MTU = attrs.MTU
	info.Up = attrs.Flags&(1<<0) != 0 // net.FlagUp
	info.Kind = link.Type()
	routes, err := h.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return info, fmt.Errorf("list routes in %s: %w", where(ns), err)
	}
	for _, r := range routes {
		if !isDefaultRoute(r) {
			continue
		}
		if r.LinkIndex == attrs.Index {
			info.CarriesDefault = true
		}
		for _, hop := range r.MultiPath {
			if hop.LinkIndex == attrs.Index {
				info.CarriesDefault = true
			}
		}
	}
	// The driver and the speed are optional: a driver that does not
	// answer leaves them unknown.
	drv := make([]byte, ethtoolDrvinfoLen)
	binary.NativeEndian.PutUint32(drv, unix.ETHTOOL_GDRVINFO)
	gset := make([]byte, ethtoolCmdLen)
	binary.NativeEndian.PutUint32(gset, unix.ETHTOOL_GSET)
	err = withSocket(ns, func(fd int) error {
		if ioctl(fd, ifname, drv) == nil {
			info.Driver = unix.ByteSliceToString(drv[4 : 4+32])
		}
		if ioctl(fd, ifname, gset) == nil {
			info.SpeedMbps = speed(gset)
		}
		return nil
	})
	return info, err
}

// Sizes of the ethtool structs of linux/ethtool.h used here.
const (
	ethtoolCmdLen     = 44  // struct ethtool_cmd (ETHTOOL_GSET)
	ethtoolDrvinfoLen = 196 // struct ethtool_drvinfo
	ethtoolValueLen   = 8   // struct ethtool_value
)

// speed is the link speed of a struct ethtool_cmd in Mbit/s, 0 when the
// driver does not say (SPEED_UNKNOWN).
func speed(cmd []byte) int {
	s := uint32(binary.NativeEndian.Uint16(cmd[28:]))<<16 | uint32(binary.NativeEndian.Uint16(cmd[12:]))
	if s == 0 || s == 0xffff || s == 0xffffffff {
		return 0
	}
	return int(s)
}

// isDefaultRoute reports whether r is an IPv4 or IPv6 default route.
func isDefaultRoute(r netlink.Route) bool {
	if r.Dst == nil {
		return r.Type == unix.RTN_UNICAST || r.Type == 0
	}
	ones, _ := r.Dst.Mask.Size()
	return ones == 0
}

func handle(ns string) (*netlink.Handle, error) {
	if ns == "" {
		return netlink.NewHandle()
	}
	nh, err := netns.GetFromName(ns)
	if err != nil {
		return nil, err
	}
	defer nh.Close()
	return netlink.NewHandleAt(nh)
}

// DisableOffloads turns off the checksum, segmentation and scatter-gather
// offloads of ifname in ns, so every frame a kernel socket sends on it is
// a real, checksummed, MTU-sized frame, as on a wire.
func DisableOffloads(ns, ifname string) error {
	return withSocket(ns, func(fd int) error {
		for _, c := range []struct {
			cmd  uint32
			what string
		}{{unix.ETHTOOL_STSO, "tso"}, {unix.ETHTOOL_SGSO, "gso"}, {unix.ETHTOOL_STXCSUM, "tx checksum"}, {unix.ETHTOOL_SSG, "scatter-gather"}} {
			v := make([]byte, ethtoolValueLen) // data 0: off
			binary.NativeEndian.PutUint32(v, c.cmd)
			if err := ioctl(fd, ifname, v); err != nil {
				return fmt.Errorf("turn off %s offload on %s in %s: %w", c.what, ifname, where(ns), err)
			}
		}
		return nil
	})
}

// Ethtool runs fn with the ethtool ioctl of ifname in ns: each call of
// do runs SIOCETHTOOL with cmd, an ethtool command struct of
// linux/ethtool.h in native byte order (its first word the command), the
// kernel's answer written back into it; do's error is the errno. One
// socket serves every call, so fn can size one command from another's
// answer (a string set, then its strings).
func Ethtool(ns, ifname string, fn func(do func(cmd []byte) error) error) error {
	return withSocket(ns, func(fd int) error {
		return fn(func(cmd []byte) error { return ioctl(fd, ifname, cmd) })
	})
}

// withSocket runs fn with an ioctl socket opened inside ns.
func withSocket(ns string, fn func(fd int) error) error {
	return nsutil.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		return fn(fd)
	})
}

// ifreqData is struct ifreq with its union holding a pointer (ifr_data).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ioctl runs SIOCETHTOOL on ifname with buf, an ethtool command struct.
func ioctl(fd int, ifname string, buf []byte) error {
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], ifname)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}
