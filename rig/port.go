package rig

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/trials"
)

// Port is one tester port, checked (ParsePort, ParseUDPPort, LabPorts).
type Port struct {
	Side      string // "a" or "b": the flags' suffix
	Interface string
	Netns     string       // empty: the current namespace
	Addr      netip.Prefix // the port's IPv4 address and prefix
	Gateway   netip.Addr   // the DUT's IPv4 address facing this port
	Addr6     netip.Prefix // optional IPv6 address
	Gateway6  netip.Addr
	FromLab   bool // created by package lab: isolated by construction
	// SocketOnly: a UDP-transport endpoint given by its addresses alone
	// (--addr-X without --port-X); it has no interface to inspect.
	SocketOnly bool
}

// ParseUDPPort checks one side of the UDP transport given by addresses alone:
// --addr-X (and --addr6-X), with or without a prefix length, optionally
// --netns-X; no interface and no gateway (the kernel routes the datagrams).
func ParseUDPPort(name string, f PortInput, ipv6 bool) (Port, error) {
	p := Port{Side: name, Netns: f.Netns, SocketOnly: true}
	if f.Gateway != "" || f.Gateway6 != "" {
		return p, inputf("--gw-%s/--gw6-%s: the udp transport between two addresses has no gateway to give (the kernel routes the datagrams); drop it, or name the interface with --port-%s", name, name, name)
	}
	parse := func(flag, v string, v6 bool) (netip.Prefix, error) {
		if v == "" {
			return netip.Prefix{}, nil
		}
		if !strings.Contains(v, "/") {
			a, err := parseAddr(flag, v, v6)
			if err != nil {
				return netip.Prefix{}, err
			}
			return netip.PrefixFrom(a, a.BitLen()), nil
		}
		return parsePrefix(flag, v, v6)
	}
	var err error
	if p.Addr, err = parse("--addr-"+name, f.Addr, false); err != nil {
		return p, err
	}
	if p.Addr6, err = parse("--addr6-"+name, f.Addr6, true); err != nil {
		return p, err
	}
	if ipv6 && !p.Addr6.IsValid() {
		return p, inputf("--ipv6: give --addr6-%s, the IPv6 address the udp transport binds on side %s", name, strings.ToUpper(name))
	}
	if !ipv6 && !p.Addr.IsValid() {
		return p, inputf("--addr-%s: missing; give the IPv4 address the udp transport binds on side %s, e.g. --addr-%s 198.18.1.2", name, strings.ToUpper(name), name)
	}
	return p, nil
}

// PortInput is one port as typed: the values of --port-X, --netns-X,
// --addr-X, --gw-X, --addr6-X and --gw6-X.
type PortInput struct {
	Interface, Netns, Addr, Gateway, Addr6, Gateway6 string
}

// Empty reports whether nothing of the port was given.
func (f PortInput) Empty() bool { return f == PortInput{} }

// ParsePort checks one port given by its interface (side "a" or "b") and
// returns it.
func ParsePort(name string, f PortInput) (Port, error) {
	p := Port{Side: name, Interface: f.Interface, Netns: f.Netns}
	if f.Interface == "" {
		return p, inputf("--port-%s: missing; name the tester's interface for port %s, e.g. --port-%s eth1 (or use --lab)", name, strings.ToUpper(name), name)
	}
	if len(f.Interface) > 15 || strings.ContainsAny(f.Interface, "/ \t") {
		return p, inputf("--port-%s %q: not an interface name (at most 15 characters, no '/' or spaces); list interfaces with 'ip link'", name, f.Interface)
	}
	if f.Addr == "" && f.Addr6 == "" {
		ex := map[string]string{"a": "198.18.1.2/24", "b": "198.19.1.2/24"}[name]
		return p, inputf("--addr-%s: missing; give port %s's test address with its prefix length, e.g. --addr-%s %s", name, strings.ToUpper(name), name, ex)
	}
	var err error
	if f.Addr != "" {
		if p.Addr, err = parsePrefix("--addr-"+name, f.Addr, false); err != nil {
			return p, err
		}
		if f.Gateway == "" {
			return p, inputf("--gw-%s: missing; give the DUT's address on port %s's side, e.g. --gw-%s %s", name, strings.ToUpper(name), name, exampleGateway(p.Addr))
		}
		if p.Gateway, err = parseAddr("--gw-"+name, f.Gateway, false); err != nil {
			return p, err
		}
		if !p.Addr.Contains(p.Gateway) {
			return p, inputf("--gw-%s %s: not inside --addr-%s %s; the DUT must be on the port's subnet, e.g. --gw-%s %s", name, p.Gateway, name, p.Addr, name, exampleGateway(p.Addr))
		}
		if p.Gateway == p.Addr.Addr() {
			return p, inputf("--gw-%s %s: the same as --addr-%s; the gateway is the DUT's address, not the tester's", name, p.Gateway, name)
		}
	} else if f.Gateway != "" {
		return p, inputf("--gw-%s %s: given without --addr-%s; give the port's IPv4 address too", name, f.Gateway, name)
	}
	if f.Addr6 != "" {
		if p.Addr6, err = parsePrefix("--addr6-"+name, f.Addr6, true); err != nil {
			return p, err
		}
		if f.Gateway6 == "" {
			return p, inputf("--gw6-%s: missing; give the DUT's IPv6 address on port %s's side", name, strings.ToUpper(name))
		}
		if p.Gateway6, err = parseAddr("--gw6-"+name, f.Gateway6, true); err != nil {
			return p, err
		}
	} else if f.Gateway6 != "" {
		return p, inputf("--gw6-%s %s: given without --addr6-%s", name, f.Gateway6, name)
	}
	return p, nil
}

func exampleGateway(p netip.Prefix) string {
	if !p.IsValid() {
		return "198.18.1.1"
	}
	return p.Masked().Addr().Next().String()
}

func parsePrefix(flag, s string, v6 bool) (netip.Prefix, error) {
	fam, ex := "IPv4", "198.18.1.2/24"
	if v6 {
		fam, ex = "IPv6", "2001:2::2/64"
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		if _, aerr := netip.ParseAddr(s); aerr == nil {
			return p, inputf("%s %s: missing the prefix length; write it like %s", flag, s, ex)
		}
		return p, inputf("%s %q: not an %s address with prefix length; write it like %s", flag, s, fam, ex)
	}
	if p.Addr().Is4() == v6 || p.Addr().Is4In6() {
		return p, inputf("%s %s: not an %s address; write it like %s", flag, s, fam, ex)
	}
	if p.Addr() == p.Masked().Addr() && p.Bits() < p.Addr().BitLen()-1 {
		return p, inputf("%s %s: that is the network address, not a host's; write it like %s", flag, s, ex)
	}
	return p, nil
}

func parseAddr(flag, s string, v6 bool) (netip.Addr, error) {
	fam, ex := "IPv4", "198.18.1.1"
	if v6 {
		fam, ex = "IPv6", "2001:2::1"
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Is4() == v6 || a.Is4In6() {
		return a, inputf("%s %q: not an %s address; write it like %s", flag, s, fam, ex)
	}
	return a, nil
}

// String describes the port the way a run prints it.
func (p Port) String() string {
	var b strings.Builder
	if p.SocketOnly {
		fmt.Fprintf(&b, "side %s: udp sockets", strings.ToUpper(p.Side))
	} else {
		fmt.Fprintf(&b, "port %s: %s", strings.ToUpper(p.Side), p.Interface)
	}
	if p.Netns != "" {
		fmt.Fprintf(&b, " (netns %s)", p.Netns)
	}
	if p.Addr.IsValid() {
		fmt.Fprintf(&b, " %s", p.Addr)
		if p.Gateway.IsValid() {
			fmt.Fprintf(&b, " via %s", p.Gateway)
		}
	}
	if p.Addr6.IsValid() {
		fmt.Fprintf(&b, " %s", p.Addr6)
		if p.Gateway6.IsValid() {
			fmt.Fprintf(&b, " via %s", p.Gateway6)
		}
	}
	return b.String()
}

// LabPorts are a lab's two ports.
func LabPorts(st *lab.State) []Port {
	conv := func(side string, p lab.Port) Port {
		return Port{Side: side, Interface: p.Interface, Netns: p.Namespace, Addr: p.IPv4, Gateway: p.GatewayV4,
			Addr6: p.IPv6, Gateway6: p.GatewayV6, FromLab: true}
	}
	return []Port{conv("a", st.A), conv("b", st.B)}
}

// CheckDestinations refuses any test address outside the benchmark blocks
// (trials.BenchmarkPrefixes, RFC 6815) unless allowAny is set, naming the
// flag that set it. Every address of a port is a destination: the other
// port sends to it, and the gateway (the DUT) receives every frame.
func CheckDestinations(ports []Port, allowAny bool) error {
	if allowAny {
		return nil
	}
	for _, p := range ports {
		for _, a := range []struct {
			flag string
			addr netip.Addr
		}{
			{"--addr-" + p.Side, p.Addr.Addr()},
			{"--gw-" + p.Side, p.Gateway},
			{"--addr6-" + p.Side, p.Addr6.Addr()},
			{"--gw6-" + p.Side, p.Gateway6},
		} {
			// Loopback traffic never leaves the host (the udp
			// transport's no-DUT check).
			if !a.addr.IsValid() || trials.InBenchmarkRange(a.addr) || (p.SocketOnly && a.addr.IsLoopback()) {
				continue
			}
			return outsideBenchmark(a.flag+" "+a.addr.String(), "")
		}
	}
	return nil
}

// outsideBenchmark is the error of a destination outside the RFC 6815 ranges.
func outsideBenchmark(what, fix string) error {
	if fix == "" {
		fix = "renumber the test network into them, or pass --allow-any-destination if this network is isolated and you accept the risk"
	}
	return inputf("%s: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 that RFC 6815 asks test traffic to stay in; %s", what, fix)
}
