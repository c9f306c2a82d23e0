//go:build linux

package trials_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/pending"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// TestRelayRateMatchesTbf: the relay DUT's shaper (issue 16, item 3) and
// the kernel DUT's tbf, set to the same rate R (drawn at test time,
// 20–150 Mbit/s), carry the same throughput: a 1518-byte stream offered at
// 1.2·R comes out at R/(8·1514) frames/s through both, within 2 %, and the
// relay adds its delay on top of the shaping.
func TestRelayRateMatchesTbf(t *testing.T) {
	pending.Skip(t, 16, "CI on 2026-12-01 (425a01f) drew R = 23.2 Mbit/s: 1.2 × R for 2 s is 768 frames over R, which the 1000-frame default queue holds, so nothing was lost and (received − 1000) / 2 s = 1,803 fps read as 6 % under R = 1,919 on both DUTs; the draw needs a queue the excess overflows (e.g. --limit 100 on both) before this can gate CI")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 16))
	rateBps := uint64(20e6+rng.Float64()*130e6) / 1000 * 1000
	const f = 1518
	want := float64(rateBps) / (8 * (f - 4))
	const delay = 5 * time.Millisecond
	t.Logf("seed %d: R = %d bit/s = %.0f fps at %d B", seed, rateBps, want, f)
	for _, tc := range []struct {
		name string
		cfg  lab.Config
	}{
		{"kernel tbf", lab.Config{AtoB: lab.Shaping{RateBps: rateBps}, BtoA: lab.Shaping{RateBps: rateBps}}},
		{"relay", lab.Config{DUT: lab.DUTRelay, Delay: delay, AtoB: lab.Shaping{RateBps: rateBps}, BtoA: lab.Shaping{RateBps: rateBps}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := labtest.New(t, tc.cfg)
			_, raw := labTesters(t, st)
			spec := trials.Spec{FrameSize: f, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}},
				RateFPS: 1.2 * want, Duration: 2 * time.Second, Settle: time.Second, Learning: 100 * time.Millisecond}
			r, err := raw.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			logResult(t, tc.name, r)
			s := r.Streams[0]
			// Received over the sending time: the queue (1000 frames)
			// drains after it, so count only what the rate let through
			// while it was offered, plus the queue.
			got := (float64(s.Received) - 1000) / s.TxSeconds
			if got < 0.98*want || got > 1.02*want {
				t.Errorf("%s: %.0f fps through (received %d in %.3f s, less the 1000-frame queue), want R = %.0f fps ±2 %%",
					tc.name, got, s.Received, s.TxSeconds, want)
			}
			if tc.cfg.DUT == lab.DUTRelay && time.Duration(s.Latency.MinNs) < delay {
				t.Errorf("relay: minimum latency %v, below the delay %v", time.Duration(s.Latency.MinNs), delay)
			}
		})
	}
}
