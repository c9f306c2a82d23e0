//go:build linux

package trials_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestIMIXSearchAccuracy is issue 16's IMIX goal on the lab: a DUT shaped
// to R bit/s (drawn at test time, from 10 Mbit/s to what the transport
// carries here; the lab's default queue
// and bucket), a throughput search of the quick profile on the simple IMIX
// with the raw, udp or xdp transport (drawn) finds R in bits/s of the mix's
// mean frame within −2 % … +1 %, the window the fixed sizes are held to
// (TestSearchAccuracyDefaultQueue): R/(8·(F̄−4)) frames/s, tbf counting
// each frame without its FCS. A trial well below R gets every frame of every
// size through, in the mix's 7:4:1 shares (raw and udp always, xdp when it
// is the transport drawn: its XDP program takes the test frames from the
// raw receiver while it is open). RFC2544_SEED=N replays a draw. Truth
// claim "ndr-imix".
func TestIMIXSearchAccuracy(t *testing.T) {
	c := truth.New(t, "ndr-imix")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x1616))
	// One search, on a transport drawn (CI time: each search takes about
	// 25 s), up to a rate that transport carries on this 2-CPU host: raw
	// 400 Mbit/s (100.48 % of R found at 394 Mbit/s in CI on 2026-12-02),
	// udp 200 (at 394 Mbit/s, 140.8 kfps of IMIX, its generator fell
	// behind from 109 kfps on and the search ended at ≥ 96.9 % of R,
	// tester-limited), xdp 400 as raw. Each transport sends the mix at R/2
	// below.
	search := []string{"raw", "udp", "xdp"}[rng.IntN(3)]
	top := map[string]float64{"raw": 400e6, "udp": 200e6, "xdp": 400e6}[search]
	rateBps := uint64(10e6+rng.Float64()*(top-10e6)) / 1000 * 1000
	mean := framing.IMIX.MeanSize()
	want := float64(rateBps) / (8 * (mean - 4))
	t.Logf("seed %d: imix (mean frame %.2f B) through a DUT shaped to %d bit/s: R = %.0f fps; search on the %s transport", seed, mean, rateBps, want, search)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}})
	udp, raw := labTesters(t, st)
	testers := map[string]rfc2544.Tester{"raw": raw, "udp": udp}

	// Below R: every frame of every size comes through.
	spec := trials.Spec{FrameSize: framing.SizeIMIX, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}},
		RateFPS: 0.5 * want, Duration: time.Second, Settle: 500 * time.Millisecond, Learning: 100 * time.Millisecond}
	halfRate := func(name string, e rfc2544.Tester) {
		r, err := e.Run(context.Background(), spec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		logResult(t, name+" imix at R/2", r)
		s := r.Streams[0]
		t.Logf("%s per size: %+v", name, s.Sizes)
		if len(s.Sizes) != 3 {
			t.Fatalf("%s: per-size counts %+v, want 64, 570 and 1518", name, s.Sizes)
		}
		for i, sz := range s.Sizes {
			share := float64(sz.Sent) / float64(s.Sent)
			if w := float64(framing.IMIX.Parts[i].Weight) / 12; sz.FrameSize != framing.IMIX.Parts[i].Size || share < w-0.01 || share > w+0.01 {
				t.Errorf("%s: %d frames of %d B sent, %.3f of the stream; want %d B at %.3f", name, sz.Sent, sz.FrameSize, share, framing.IMIX.Parts[i].Size, w)
			}
			if sz.Received != sz.Sent && !r.TesterLimited {
				t.Errorf("%s: %d B: %d of %d frames received at half the shaped rate", name, sz.FrameSize, sz.Received, sz.Sent)
			}
		}
	}
	halfRate("raw", raw)
	halfRate("udp", udp)
	if search == "xdp" {
		x := labXDP(t, st)
		halfRate("xdp", x)
		testers["xdp"] = x
	}

	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []rfc2544.Test{rfc2544.TestThroughput}, []int{framing.SizeIMIX}, 1e9, true
	tester := testers[search]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	res, err := (&rfc2544.Runner{Tester: tester, Plan: plan}).Throughput(ctx, framing.SizeIMIX)
	cancel()
	if err != nil {
		t.Fatalf("%s: throughput imix: %v", search, err)
	}
	for _, tr := range res.Trials {
		t.Logf("%s trial %d (%s, %.2g s): intended %.0f offered %.0f fps (%.2f%% of R), loss %.3f%%, %v %s%s", search, tr.Step, tr.Goal, tr.DurationS,
			tr.IntendedFPS, tr.OfferedFPS, 100*tr.OfferedFPS/want, tr.LossPercent, tr.Outcome, tr.TesterLimitReason, tr.FailReason)
	}
	t.Logf("%s imix: throughput %.0f fps = %.2f%% of R (%.0f fps), %.1f Mbit/s L2, found %v, tester-limited %v %s", search, res.FPS, 100*res.FPS/want, want,
		res.L2Bps/1e6, res.Found, res.TesterLimited, res.Reason)
	if !res.Found || res.TesterLimited {
		t.Fatalf("%s imix at R = %d bit/s: found %v, tester-limited %v (%s): want the DUT's throughput", search, rateBps, res.Found, res.TesterLimited, res.Reason)
	}
	c.Ratio("throughput / R", fmt.Sprintf("%s, imix at %.1f Mbit/s", search, float64(rateBps)/1e6), want, res.FPS, 0.98, 1.01)
}
