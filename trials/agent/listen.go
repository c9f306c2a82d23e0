package agent

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// DefaultListen is the agent's listen address when none is given: loopback
// only, never every interface silently.
const DefaultListen = "127.0.0.1:2544"

// ParseListen reads a listen address: an IP literal with an optional port
// (DefaultPort); "" is DefaultListen. An empty host is refused: every
// interface (0.0.0.0 or ::) must be written out.
func ParseListen(s string) (netip.AddrPort, error) {
	if s == "" {
		return netip.MustParseAddrPort(DefaultListen), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = trimBrackets(s), strconv.Itoa(DefaultPort)
	}
	if host == "" {
		return netip.AddrPort{}, errors.New("no address: name this host's address on the test network, e.g. 198.19.1.2:2544 (0.0.0.0:2544 for every interface, if you mean it)")
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IP address; give the address of this host's test interface, e.g. 198.19.1.2:2544", host)
	}
	if a.Zone() != "" {
		return netip.AddrPort{}, errors.New("zoned (link-local) addresses are not supported; give a global or private address")
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return netip.AddrPort{}, fmt.Errorf("port %q: want 1 to 65535 (default %d)", port, DefaultPort)
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}
