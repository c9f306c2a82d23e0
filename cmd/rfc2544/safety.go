package main

import (
	"net/netip"
)

// RFC 6815: benchmark traffic belongs on isolated test networks. These are
// the address blocks RFC 2544 Appendix C (198.18.0.0/15, RFC 5735) and
// RFC 5180 (2001:2::/48) set aside for it.
var benchmarkPrefixes = []netip.Prefix{
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("2001:2::/48"),
}

// inBenchmarkRange reports whether a is inside a benchmark address block.
func inBenchmarkRange(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range benchmarkPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// checkDestinations refuses any test address outside the benchmark blocks
// unless allowAny is set. Every address of a port is a destination: the
// other port sends to it, and the gateway (the DUT) receives every frame.
func checkDestinations(ports []portConfig, allowAny bool) error {
	if allowAny {
		return nil
	}
	for _, p := range ports {
		for _, a := range []struct {
			flag string
			addr netip.Addr
		}{
			{"--addr-" + p.name, p.addr.Addr()},
			{"--gw-" + p.name, p.gateway},
			{"--addr6-" + p.name, p.addr6.Addr()},
			{"--gw6-" + p.name, p.gateway6},
		} {
			// Loopback traffic never leaves the host (the udp
			// transport's no-DUT check).
			if !a.addr.IsValid() || inBenchmarkRange(a.addr) || (p.socketOnly && a.addr.IsLoopback()) {
				continue
			}
			return usagef("%s %s: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 that RFC 6815 asks test traffic to stay in; "+
				"renumber the test network into them, or pass --allow-any-destination if this network is isolated and you accept the risk", a.flag, a.addr)
		}
	}
	return nil
}
