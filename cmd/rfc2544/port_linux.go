package main

import (
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

// inspectPort looks a port's interface up in its network namespace: that it
// exists, its MTU, driver and speed, and whether the namespace's default
// route leaves through it. It sends nothing.
func inspectPort(p portConfig) (portInfo, error) {
	var info portInfo
	where := "the host's network namespace"
	if p.netns != "" {
		where = fmt.Sprintf("network namespace %q", p.netns)
	}
	h, err := netlinkHandle(p.netns)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return info, usagef("--netns-%s %s: no such network namespace; list them with 'ip netns list'", p.name, p.netns)
		}
		if errors.Is(err, os.ErrPermission) {
			return info, fmt.Errorf("open %s for port %s: %w (run as root)", where, p.name, err)
		}
		return info, fmt.Errorf("open %s for port %s: %w", where, p.name, err)
	}
	defer h.Close()
	link, err := h.LinkByName(p.iface)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return info, usagef("--port-%s %s: no such interface in %s; list interfaces with 'ip link'%s", p.name, p.iface, where, nsHint(p))
		}
		return info, fmt.Errorf("look up interface %s of port %s in %s: %w", p.iface, p.name, where, err)
	}
	attrs := link.Attrs()
	info.index = attrs.Index
	info.mtu = attrs.MTU
	info.up = attrs.Flags&(1<<0) != 0 // net.FlagUp
	info.kind = link.Type()
	routes, err := h.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return info, fmt.Errorf("list routes in %s: %w", where, err)
	}
	for _, r := range routes {
		if !isDefaultRoute(r) {
			continue
		}
		if r.LinkIndex == attrs.Index {
			info.carriesDefault = true
		}
		for _, hop := range r.MultiPath {
			if hop.LinkIndex == attrs.Index {
				info.carriesDefault = true
			}
		}
	}
	err = nsutil.Do(p.netns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		if d, err := unix.IoctlGetEthtoolDrvinfo(fd, p.iface); err == nil {
			info.driver = unix.ByteSliceToString(d.Driver[:])
		}
		info.speedMbps = ethtoolSpeed(fd, p.iface)
		return nil
	})
	return info, err
}

func nsHint(p portConfig) string {
	if p.netns == "" {
		return fmt.Sprintf(", or give its namespace with --netns-%s", p.name)
	}
	return fmt.Sprintf(" -n %s", p.netns)
}

// isDefaultRoute reports whether r is an IPv4 or IPv6 default route.
func isDefaultRoute(r netlink.Route) bool {
	if r.Dst == nil {
		return r.Type == unix.RTN_UNICAST || r.Type == 0
	}
	ones, _ := r.Dst.Mask.Size()
	return ones == 0
}

func netlinkHandle(ns string) (*netlink.Handle, error) {
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

// ethtoolCmd is struct ethtool_cmd of linux/ethtool.h (ETHTOOL_GSET).
type ethtoolCmd struct {
	cmd           uint32
	supported     uint32
	advertising   uint32
	speed         uint16
	duplex        uint8
	port          uint8
	phyAddress    uint8
	transceiver   uint8
	autoneg       uint8
	mdioSupport   uint8
	maxtxpkt      uint32
	maxrxpkt      uint32
	speedHi       uint16
	ethTpMdix     uint8
	ethTpMdixCtrl uint8
	lpAdvertising uint32
	reserved      [2]uint32
}

// ifreqData is struct ifreq carrying a pointer (ifr_data).
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtoolSpeed is the interface's link speed in Mbit/s, or 0 when the
// driver does not say (SPEED_UNKNOWN, or the ioctl is not supported).
func ethtoolSpeed(fd int, iface string) int {
	cmd := ethtoolCmd{cmd: unix.ETHTOOL_GSET}
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], iface)
	ifr.data = unsafe.Pointer(&cmd)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&cmd)
	if errno != 0 {
		return 0
	}
	speed := uint32(cmd.speedHi)<<16 | uint32(cmd.speed)
	if speed == 0 || speed == 0xffff || speed == 0xffffffff {
		return 0
	}
	return int(speed)
}
