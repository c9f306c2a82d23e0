//go:build linux

package trials_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestLatencyRelay (truth claim "relay-latency") is the latency test's
// promise through the relay DUT (a user-space forwarder whose only buffer
// is its socket queue) set to a delay D drawn at test time: the quick
// profile's latency test runs at the throughput found, and there the DUT's
// queue does not grow. A relay at its own edge queues now and then (a stall
// of its process on these two CPUs builds a queue that drains slowly, so
// the P99 says more about the host than the DUT); what the test promises is
// a rate at which the queue does not grow: in every latency trial the
// fitted rise of latency over the trial (LatencyTrend.RiseNs) stays below
// max(1 ms, D/5), and the minimum latency lies within D … D + 0.3 ms.
// RFC2544_SEED replays a draw.
func TestLatencyRelay(t *testing.T) {
	c := truth.New(t, "relay-latency")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0xde1a))
	d := time.Duration(1e6 + rng.Float64()*9e6).Round(10 * time.Microsecond) // 1–10 ms
	sizes := []int{64, 512, 1518}
	f := sizes[rng.IntN(len(sizes))]
	kase := fmt.Sprintf("%d B, D %v", f, d)
	t.Logf("relay delay %v, %d B", d, f)

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
	if lat.Skipped != "" || s.Count == 0 || len(lat.Trials) == 0 {
		t.Fatalf("latency skipped (%s), %d frames, %d trials", lat.Skipped, s.Count, len(lat.Trials))
	}
	rise := max(time.Millisecond, d/5)
	for i, tr := range lat.Trials {
		for _, st := range tr.Result.Streams {
			if st.Trend == nil {
				t.Fatalf("latency trial %d stream %d: no latency trend", i, st.ID)
			}
			k := fmt.Sprintf("%s, trial %d at %.0f fps", kase, i, tr.OfferedFPS)
			c.Within("queue growth over a latency trial / max(1 ms, D/5)", k, float64(st.Trend.RiseNs)/float64(rise), math.Inf(-1), 1)
			c.Within("latency min − D, ms", k, float64(st.Latency.MinNs-int64(d))/1e6, 0, 0.3)
		}
	}
}
