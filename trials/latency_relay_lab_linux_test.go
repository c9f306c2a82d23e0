//go:build linux

package trials_test

import (
	"context"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/pending"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestLatencyRelayNoStandingQueue is issue 12's latency goal: through the
// relay DUT (a user-space forwarder whose only buffer is its socket queue)
// set to a delay D drawn at test time, the quick profile's latency test runs
// at the sustained throughput and its P99 is within D … D + 2 ms: no
// standing queue. On ce6ef8b a 1 s trial passed at a rate the relay could
// not sustain, and the latency test there read mean 78 ms, P99 311 ms for
// D = 3.37 ms. RFC2544_SEED replays a draw.
func TestLatencyRelayNoStandingQueue(t *testing.T) {
	pending.Skip(t, 12, "the relay is a user-space DUT on the tester's two CPUs: at its NDR a stall of its process builds a queue that drains slowly (CI on 2026-12-01, 64 B, D = 2.58 ms: P99 44.8 ms at 167,873 fps; quiet runs: D + 1.4 … 1.9 ms)")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0xde1a))
	d := time.Duration(1e6 + rng.Float64()*9e6).Round(10 * time.Microsecond) // 1–10 ms
	sizes := []int{64, 512, 1518}
	f := sizes[rng.IntN(len(sizes))]
	t.Logf("seed %d (replay: RFC2544_SEED=%d): relay delay %v, %d B", seed, seed, d, f)

	st := labtest.New(t, lab.Config{DUT: lab.DUTRelay, Relay: lab.RelayConfig{Delay: d}})
	_, raw := labTesters(t, st)
	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency}, []int{f}, 1e9, true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &rfc2544.Runner{Tester: raw, Plan: plan}
	tp, err := r.Throughput(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tp.Trials {
		t.Logf("trial %d (%s, %.2g s): intended %.0f offered %.0f fps, loss %.3f%%, latency min %.3f avg %.3f max %.3f ms, %v %s%s",
			tr.Step, tr.Goal, tr.DurationS, tr.IntendedFPS, tr.OfferedFPS, tr.LossPercent,
			float64(tr.LatencyMinNs)/1e6, tr.LatencyAvgNs/1e6, float64(tr.LatencyMaxNs)/1e6, tr.Outcome, tr.TesterLimitReason, tr.FailReason)
	}
	t.Logf("throughput %.0f fps (found %v, tester-limited %v) %s %s", tp.FPS, tp.Found, tp.TesterLimited, tp.Reason, tp.Note)
	if !tp.Found {
		t.Fatalf("no throughput through the relay: %s", tp.Reason)
	}
	lat, err := r.Latency(ctx, f, tp)
	if err != nil {
		t.Fatal(err)
	}
	s := lat.Summary
	t.Logf("latency at %.0f fps: min %.3f mean %.3f P99 %.3f max %.3f ms (%s %s)", lat.RateFPS,
		float64(s.MinNs)/1e6, s.MeanNs/1e6, float64(s.P99Ns)/1e6, float64(s.MaxNs)/1e6, lat.Skipped, lat.Note)
	if lat.Skipped != "" || s.Count == 0 {
		t.Fatalf("latency skipped (%s), %d frames", lat.Skipped, s.Count)
	}
	if p99 := time.Duration(s.P99Ns); p99 < d || p99 > d+2*time.Millisecond {
		t.Errorf("latency P99 %v through a relay delaying %v: want %v … %v (no standing queue)", p99, d, d, d+2*time.Millisecond)
	}
}
