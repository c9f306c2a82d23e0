// Package netdev inspects and adjusts a network interface inside a named
// network namespace ("" is the current one): its link attributes and the
// namespace's default routes through netlink, its driver, speed and
// offloads through the ethtool ioctl. It is the module's one ethtool
// implementation, used by the CLI's port checks and the lab's ports.
//
// The ethtool ioctl (SIOCETHTOOL) rather than ethtool's generic netlink
// family: the Go client of that family (github.com/mdlayher/ethtool) offers
// neither the driver name nor the offload features, so it could not replace
// the ioctl, only add a second implementation.
package netdev

import "errors"

// Info is what Inspect learns about an interface.
type Info struct {
	Index int
	MTU   int
	Up    bool
	// Kind is the netlink link type, e.g. "veth", "device".
	Kind string
	// Driver is the ethtool driver name, e.g. "veth", "ixgbe"; "" when
	// the driver does not say.
	Driver string
	// SpeedMbps is the link speed in Mbit/s; 0 when unknown.
	SpeedMbps int
	// CarriesDefault: an IPv4 or IPv6 default route of the namespace
	// leaves through the interface.
	CarriesDefault bool
}

var (
	// ErrNoNamespace: the named network namespace does not exist.
	ErrNoNamespace = errors.New("no such network namespace")
	// ErrNoInterface: the interface does not exist in the namespace.
	ErrNoInterface = errors.New("no such interface")
)

// where names a namespace in messages.
func where(ns string) string {
	if ns == "" {
		return "the host's network namespace"
	}
	return "network namespace " + `"` + ns + `"`
}

// NominalVethBps is the line rate given to a veth, which has none of its
// own: 1 Gbit/s.
const NominalVethBps = 1e9

// LineRateBps is the interface's line rate in bit/s: its link speed, or
// NominalVethBps for a veth (nominal true); 0 when the driver reports no
// speed.
func (i Info) LineRateBps() (bps float64, nominal bool) {
	switch {
	case i.Driver == "veth" || i.Kind == "veth":
		return NominalVethBps, true
	case i.SpeedMbps > 0:
		return float64(i.SpeedMbps) * 1e6, false
	}
	return 0, false
}
