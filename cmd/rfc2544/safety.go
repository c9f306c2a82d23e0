package main

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
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

// capTester refuses, before sending, any trial faster than the rate cap
// (--max-rate): the cap is always in force, whatever the plan asks.
type capTester struct {
	next    rfc2544.Tester
	capBps  float64 // L1 bits per second per stream (per sending port)
	capFlag string  // how the cap was set, for the error
}

var _ rfc2544.Tester = (*capTester)(nil)

// Run runs spec when every stream's L1 rate is within the cap. A burst with
// no rate (RateFPS 0, "as fast as possible") is allowed only when the cap is
// at least the line rate, which such a burst cannot exceed on a real link.
func (c *capTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if err := c.check(spec); err != nil {
		return trials.Result{Spec: spec}, err
	}
	return c.next.Run(ctx, spec)
}

func (c *capTester) check(spec trials.Spec) error {
	rates := []float64{spec.RateFPS}
	if spec.RateChange != nil {
		rates = append(rates, spec.RateChange.RateFPS)
	}
	for _, r := range rates {
		if r == 0 && spec.BurstFrames > 0 {
			// A burst at the tester's own speed: cap it via the engine's
			// MaxRateFPS (set from the same cap), nothing to check here.
			continue
		}
		if bps := framing.L1Bps(r, spec.FrameSize); bps > c.capBps*(1+1e-9) {
			return fmt.Errorf("trial at %.0f fps of %d-byte frames is %s per port, above the rate cap %s (%s); "+
				"raise --max-rate if the DUT and the network can take it", r, spec.FrameSize, formatBitRate(bps), formatBitRate(c.capBps), c.capFlag)
		}
	}
	return nil
}
