package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// portConfig is one tester port as the flags or a lab gave it.
type portConfig struct {
	name     string // "a" or "b"
	iface    string
	netns    string       // empty: the current namespace
	addr     netip.Prefix // the port's IPv4 address and prefix
	gateway  netip.Addr   // the DUT's IPv4 address facing this port
	addr6    netip.Prefix // optional IPv6 address
	gateway6 netip.Addr
	fromLab  bool // created by package lab: isolated by construction
	// socketOnly: a UDP-transport endpoint given by its addresses alone
	// (--addr-X without --port-X); it has no interface to inspect.
	socketOnly bool
}

// parseUDPPort checks one side of the UDP transport given by addresses alone:
// --addr-X (and --addr6-X), with or without a prefix length, optionally
// --netns-X; no interface and no gateway (the kernel routes the datagrams).
func parseUDPPort(name string, f portFlags, ipv6 bool) (portConfig, error) {
	p := portConfig{name: name, netns: f.netns, socketOnly: true}
	if f.gw != "" || f.gw6 != "" {
		return p, usagef("--gw-%s/--gw6-%s: the udp transport between two addresses has no gateway to give (the kernel routes the datagrams); drop it, or name the interface with --port-%s", name, name, name)
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
	if p.addr, err = parse("--addr-"+name, f.addr, false); err != nil {
		return p, err
	}
	if p.addr6, err = parse("--addr6-"+name, f.addr6, true); err != nil {
		return p, err
	}
	if ipv6 && !p.addr6.IsValid() {
		return p, usagef("--ipv6: give --addr6-%s, the IPv6 address the udp transport binds on side %s", name, strings.ToUpper(name))
	}
	if !ipv6 && !p.addr.IsValid() {
		return p, usagef("--addr-%s: missing; give the IPv4 address the udp transport binds on side %s, e.g. --addr-%s 198.18.1.2", name, strings.ToUpper(name), name)
	}
	return p, nil
}

// portFlags are the raw --port-X, --addr-X ... values of one port.
type portFlags struct {
	iface, netns, addr, gw, addr6, gw6 string
}

func (f portFlags) empty() bool { return f == portFlags{} }

// parsePort checks one port's flags and returns its config.
func parsePort(name string, f portFlags) (portConfig, error) {
	p := portConfig{name: name, iface: f.iface, netns: f.netns}
	if f.iface == "" {
		return p, usagef("--port-%s: missing; name the tester's interface for port %s, e.g. --port-%s eth1 (or use --lab)", name, strings.ToUpper(name), name)
	}
	if len(f.iface) > 15 || strings.ContainsAny(f.iface, "/ \t") {
		return p, usagef("--port-%s %q: not an interface name (at most 15 characters, no '/' or spaces); list interfaces with 'ip link'", name, f.iface)
	}
	if f.addr == "" && f.addr6 == "" {
		ex := map[string]string{"a": "198.18.1.2/24", "b": "198.19.1.2/24"}[name]
		return p, usagef("--addr-%s: missing; give port %s's test address with its prefix length, e.g. --addr-%s %s", name, strings.ToUpper(name), name, ex)
	}
	var err error
	if f.addr != "" {
		if p.addr, err = parsePrefix("--addr-"+name, f.addr, false); err != nil {
			return p, err
		}
		if f.gw == "" {
			return p, usagef("--gw-%s: missing; give the DUT's address on port %s's side, e.g. --gw-%s %s", name, strings.ToUpper(name), name, exampleGateway(p.addr))
		}
		if p.gateway, err = parseAddr("--gw-"+name, f.gw, false); err != nil {
			return p, err
		}
		if !p.addr.Contains(p.gateway) {
			return p, usagef("--gw-%s %s: not inside --addr-%s %s; the DUT must be on the port's subnet, e.g. --gw-%s %s", name, p.gateway, name, p.addr, name, exampleGateway(p.addr))
		}
		if p.gateway == p.addr.Addr() {
			return p, usagef("--gw-%s %s: the same as --addr-%s; the gateway is the DUT's address, not the tester's", name, p.gateway, name)
		}
	} else if f.gw != "" {
		return p, usagef("--gw-%s %s: given without --addr-%s; give the port's IPv4 address too", name, f.gw, name)
	}
	if f.addr6 != "" {
		if p.addr6, err = parsePrefix("--addr6-"+name, f.addr6, true); err != nil {
			return p, err
		}
		if f.gw6 == "" {
			return p, usagef("--gw6-%s: missing; give the DUT's IPv6 address on port %s's side", name, strings.ToUpper(name))
		}
		if p.gateway6, err = parseAddr("--gw6-"+name, f.gw6, true); err != nil {
			return p, err
		}
	} else if f.gw6 != "" {
		return p, usagef("--gw6-%s %s: given without --addr6-%s", name, f.gw6, name)
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
			return p, usagef("%s %s: missing the prefix length; write it like %s", flag, s, ex)
		}
		return p, usagef("%s %q: not an %s address with prefix length; write it like %s", flag, s, fam, ex)
	}
	if p.Addr().Is4() == v6 || p.Addr().Is4In6() {
		return p, usagef("%s %s: not an %s address; write it like %s", flag, s, fam, ex)
	}
	if p.Addr() == p.Masked().Addr() && p.Bits() < p.Addr().BitLen()-1 {
		return p, usagef("%s %s: that is the network address, not a host's; write it like %s", flag, s, ex)
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
		return a, usagef("%s %q: not an %s address; write it like %s", flag, s, fam, ex)
	}
	return a, nil
}

// describe writes a port the way the run prints it.
func (p portConfig) describe() string {
	var b strings.Builder
	if p.socketOnly {
		fmt.Fprintf(&b, "side %s: udp sockets", strings.ToUpper(p.name))
	} else {
		fmt.Fprintf(&b, "port %s: %s", strings.ToUpper(p.name), p.iface)
	}
	if p.netns != "" {
		fmt.Fprintf(&b, " (netns %s)", p.netns)
	}
	if p.addr.IsValid() {
		fmt.Fprintf(&b, " %s", p.addr)
		if p.gateway.IsValid() {
			fmt.Fprintf(&b, " via %s", p.gateway)
		}
	}
	if p.addr6.IsValid() {
		fmt.Fprintf(&b, " %s", p.addr6)
		if p.gateway6.IsValid() {
			fmt.Fprintf(&b, " via %s", p.gateway6)
		}
	}
	return b.String()
}
