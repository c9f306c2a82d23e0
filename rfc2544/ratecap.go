package rfc2544

import (
	"fmt"
	"strconv"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/trials"
)

// checkRate refuses spec when a stream's L1 rate is above maxBps bit/s
// (per stream, i.e. per sending port; 0 is linkBps); source says how the
// cap was set. A
// burst with no rate (RateFPS 0: as fast as the tester can) passes: the
// engine's MaxRateFPS caps it, and it cannot exceed the line rate.
func checkRate(spec trials.Spec, maxBps float64, source string, linkBps float64) error {
	switch {
	case maxBps == 0:
		maxBps, source = linkBps, "the line rate"
	case source == "":
		source = "Runner.MaxBps"
	}
	rates := []float64{spec.RateFPS}
	if spec.RateChange != nil {
		rates = append(rates, spec.RateChange.RateFPS)
	}
	for _, r := range rates {
		if r == 0 && spec.BurstFrames > 0 {
			continue
		}
		if bps := framing.L1Bps(r, spec.FrameSize); bps > maxBps*(1+1e-9) {
			return fmt.Errorf("trial at %.0f fps of %d-byte frames is %s per port, above the rate cap %s (%s); "+
				"raise it only if the DUT and the network can take it", r, spec.FrameSize, mbps(bps), mbps(maxBps), source)
		}
	}
	return nil
}

func mbps(bps float64) string { return strconv.FormatFloat(bps/1e6, 'g', 6, 64) + " Mbit/s" }

// CheckRateCap refuses, before anything is sent, a plan whose highest load
// (HighestLoad) is above capBps, the L1 bit/s cap per port, saying which
// test needs how much.
func (p Plan) CheckRateCap(capBps float64) error {
	need, by := p.HighestLoad()
	if need <= capBps*(1+1e-9) {
		return nil
	}
	why := fmt.Sprintf("the %s test sends at the full line rate %s", by, rate.Format(p.LinkBps))
	if by == TestThroughput {
		why = fmt.Sprintf("the throughput search goes up to %g%% of the line rate %s", p.Throughput.MaxPercent, rate.Format(p.LinkBps))
	}
	return fmt.Errorf("below the %s the plan sends (%s)", rate.Format(need), why)
}
