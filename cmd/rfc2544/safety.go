package main

import (
	"net/netip"

	"github.com/rfc2544/rfc2544/trials"
)

// checkDestinations refuses any test address outside the benchmark blocks
// (trials.BenchmarkPrefixes, RFC 6815) unless allowAny is set, naming the
// flag that set it. Every address of a port is a destination: the
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
			if !a.addr.IsValid() || trials.InBenchmarkRange(a.addr) || (p.socketOnly && a.addr.IsLoopback()) {
				continue
			}
			return usagef("%s %s: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 that RFC 6815 asks test traffic to stay in; "+
				"renumber the test network into them, or pass --allow-any-destination if this network is isolated and you accept the risk", a.flag, a.addr)
		}
	}
	return nil
}
