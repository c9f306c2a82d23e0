//go:build linux

package trials_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// TestBurstOfferedIsTheTesters: a paced 100 ms burst through a DUT shaped
// below it with the lab's default 1000-packet queue is offered at the rate
// asked, not at the rate the DUT drains its queue. On a veth the kernel keeps
// each frame's transmit-ring slot until the DUT is done with the frame, so
// the ring empties only when the DUT's queue has (12-17 ms after the last
// frame here): counted as the tester's send time, it made every 64-byte
// back-to-back burst of the main job 12-15 % "short" and tester-limited
// (CI, 2026-12-01). The rate is drawn at test time (60-90 kfps of 64-byte
// frames, well under the raw engine's ceiling through the lab's DUT), the
// shaper at half of it; the burst must be offered within 1 % of the rate
// (the generator's own tolerance) and lose frames (the DUT is overrun).
func TestBurstOfferedIsTheTesters(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0xb0257))
	fps := 60000 + rng.Float64()*30000
	const size = 64
	shape := fps / 2 * 8 * (size - 4) // tbf counts F−4 bytes per frame
	t.Logf("seed %d: burst at %.0f fps of %d B through %.1f Mbit/s, default queue", seed, fps, size, shape/1e6)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: uint64(shape)}})
	_, raw := labTesters(t, st)
	n := int64(fps / 10) // 100 ms
	spec := trials.Spec{FrameSize: size, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, RateFPS: fps,
		BurstFrames: n, Settle: 300 * time.Millisecond}
	// A run spoiled by a stall of this VM (the engine marks it transient)
	// is run again, up to twice. So is one the engine calls flow-controlled
	// because the DUT's ingress refused frames (its input queue, the
	// kernel's backlog, was full): the path did hold the tester back, and
	// such a run cannot show where the send time ends. Seen in CI on
	// 2026-12-02, then in 4 of 22 runs of this test (three refused runs in
	// a row once, at 71.5 kfps): 580-1,491 of 2,706-3,194 transmit calls
	// refused, the burst 2.4-24.4 % short. A run with a few refusals and
	// no flow control (25 of 2,473, once) is checked as any other; nothing
	// else is run again: a send time counted to the ring's drain is
	// neither.
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := raw.Run(ctx, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		logResult(t, "raw", res)
		if res.TesterLimited && res.TesterLimitTransient && attempt < 3 {
			continue
		}
		if res.FlowControlled && refused(res) {
			if attempt < 3 {
				t.Logf("run %d: the DUT's ingress refused frames (flow-controlled, as it should be): running again", attempt)
				continue
			}
			t.Skipf("the DUT's ingress refused frames in all %d runs (flow-controlled each time): where the send time ends could not be checked on this host (issue 18)", attempt)
		}
		s := res.Streams[0]
		if s.Lost == 0 {
			t.Errorf("a %d-frame burst at twice the shaped rate lost nothing: the test needs an overrun DUT", n)
		}
		if s.OfferedFPS < 0.99*fps || s.OfferedFPS > 1.01*fps || res.TesterLimited {
			t.Errorf("a burst of %d frames at %.0f fps offered at %.0f fps (%.1f %% short), tester-limited %v (%s); want within 1 %%, not tester-limited: the DUT's queue is not the tester's send time",
				n, fps, s.OfferedFPS, 100*(1-s.OfferedFPS/fps), res.TesterLimited, res.TesterLimitReason)
		}
		return
	}
}

// refused reports whether the kernel refused transmit calls of a trial (the
// next hop's queue was full).
func refused(r trials.Result) bool {
	for _, p := range r.TxPressure {
		if p.Refused > 0 {
			return true
		}
	}
	return false
}
