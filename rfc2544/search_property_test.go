package rfc2544

import (
	"context"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSearchPropertyDropTail: on thousands of simulated DUTs (capacity drawn at test
// time, a bufferless drop-tail DUT without noise, the seven RFC 2544 sizes),
// every search finds the DUT's forwarding rate: found, never above it, and
// at most its accuracy below it (binary: the resolution; step: one step;
// combo: the resolution), in points of the line rate or relative to the load. The seed is
// logged; RFC2544_SEED=N replays a failure. (MLRsearch, issue 12, joins the
// list with its own accuracy, a relative width.)
func TestSearchPropertyDropTail(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 2544))
	const line = 1e9
	searches := []Search{SearchBinary, SearchStep, SearchCombo}
	cases := 3000
	if testing.Short() {
		cases = 300
	}
	failures := 0
	for i := range cases {
		search := searches[i%len(searches)]
		size := DefaultFrameSizes[rng.IntN(len(DefaultFrameSizes))]
		// Step and combo start at 10 % and step up: capacities from 15 %.
		frac := 0.15 + rng.Float64()*0.83
		if search == SearchBinary {
			frac = 0.02 + rng.Float64()*0.96
		}
		dut := &SimDUT{LinkBps: line, CapacityBps: frac * line, Seed: rng.Uint64()}
		plan, err := DefaultPlan(ProfileQuick)
		if err != nil {
			t.Fatal(err)
		}
		plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []Test{TestThroughput}, []int{size}, line, true
		plan.Throughput.Search = search
		r := &Runner{Tester: dut, Plan: plan, Sleep: func(context.Context, time.Duration) error { return nil }}
		res, err := r.Throughput(context.Background(), size)
		if err != nil {
			t.Fatalf("case %d (%s, %d B, capacity %.4f of line): %v", i, search, size, frac, err)
		}
		c := dut.ForwardingFPS(size)
		lineFPS := line / (8 * float64(size+20))
		// The resolution is in points of the line rate, or relative to the
		// lower bound (the default, resolution_relative_percent).
		acc := plan.Throughput.ResolutionPercent
		if acc == 0 {
			acc = plan.Throughput.ResolutionRelativePercent * c / lineFPS
		}
		if search == SearchStep {
			acc = plan.Throughput.StepPercent
		}
		// Less one frame: a trial sends whole frames, so its offered rate
		// is up to one frame per trial-second below the load (case 781
		// of seed 1796078916826579685: 48764.000 fps offered at 60 %,
		// 48764.63 intended, against a bound of 48764.031).
		lo := c - acc/100*lineFPS - 1/plan.Trial.Duration.D().Seconds()
		if !res.Found || res.TesterLimited || res.FPS > c*(1+1e-9) || res.FPS < lo*(1-1e-9) {
			failures++
			if failures <= 10 {
				t.Errorf("case %d: %s search, %d B, DUT forwards %.3f fps (%.4f%% of line): throughput %.3f fps (found %v, tester-limited %v, %s), want %.3f … %.3f (%g points of line below)",
					i, search, size, c, 100*c/lineFPS, res.FPS, res.Found, res.TesterLimited, res.Reason, lo, c, acc)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d cases failed (seed %d)", failures, cases, seed)
	}
}
