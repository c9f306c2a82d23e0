//go:build linux

package trials

import (
	"math"
	"os/exec"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// Accuracy on the lab: the lab's settings are ground truth.

func oneWay(frame int, rate float64, d time.Duration) Spec {
	return Spec{FrameSize: frame, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: rate, Duration: d,
		Settle: 300 * time.Millisecond}
}

// TestAccuracyShaped: a DUT shaped to R carries a load below R without loss
// and drops about 1 − R/offered above it (less the frames its queue and
// token bucket absorb). Neither trial may be tester-limited, except that a
// trial the engine marks transiently limited (a stall of this shared host)
// is run again, at most twice: a persistent limit, or loss below R, fails.
func TestAccuracyShaped(t *testing.T) {
	const rateBps = 50e6
	const limit = 100
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, LimitPackets: limit}})
	e := openEngine(t, portsOf(st))
	for _, frame := range []int{512, 1518} {
		// tbf counts the IP packet plus the Ethernet header: F − 4 bytes.
		rFPS := rateBps / (float64(frame-4) * 8)
		rb := runUntrammelled(t, e, oneWay(frame, 0.9*rFPS, 2*time.Second), 3)
		if below := rb.Streams[0]; below.Sent == 0 || below.Lost != 0 || rb.TesterLimited {
			t.Errorf("%d B at 90%% of R: sent %d lost %d, tester-limited %v (%s); want no loss, not limited",
				frame, below.Sent, below.Lost, rb.TesterLimited, rb.TesterLimitReason)
		}
		ra := runUntrammelled(t, e, oneWay(frame, 1.5*rFPS, 2*time.Second), 3)
		if ra.TesterLimited {
			t.Errorf("%d B at 150%% of R: tester-limited (%s), want the DUT's loss", frame, ra.TesterLimitReason)
		}
		above := ra.Streams[0]
		ideal := 100 * (1 - rFPS/above.OfferedFPS)
		// Frames the bucket (burst: max(10 ms at R, 2 frames)) and the queue
		// absorb beyond R·T reduce the loss a little.
		slack := 100 * (limit + 0.01*rFPS + 2) / float64(above.Sent)
		if got := above.LossPercent(); got < ideal-slack-1 || got > ideal+1 {
			t.Errorf("%d B at 150%% of R: loss %.2f%%, want %.2f%% (−%.2f for queue and burst) ±1", frame, got, ideal, slack)
		}
		t.Logf("%d B: R = %.0f fps; at 150%%: loss %.2f%% (ideal %.2f%%)", frame, rFPS, above.LossPercent(), ideal)
	}
}

// runUntrammelled runs spec until a trial is not transiently tester-limited
// (a stall of the tester's host, Result.TesterLimitTransient), at most tries
// times, and returns the last: only a transient limit is run again, so a
// persistent one comes back for the caller to fail.
func runUntrammelled(t *testing.T, e *Engine, spec Spec, tries int) Result {
	t.Helper()
	var r Result
	for i := 0; i < tries; i++ {
		r = runTrial(t, e, spec)
		if !r.TesterLimited || !r.TesterLimitTransient {
			return r
		}
		t.Logf("run %d: transient tester limit (%s), running again", i+1, r.TesterLimitReason)
	}
	return r
}

// TestAccuracyRandomLoss: a DUT dropping p = 1 % at random shows 1 ± 0.3
// points of loss at low load.
func TestAccuracyRandomLoss(t *testing.T) {
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{LossPercent: 1}})
	e := openEngine(t, portsOf(st))
	s := runTrial(t, e, oneWay(64, 20000, 2*time.Second)).Streams[0]
	if got := s.LossPercent(); math.Abs(got-1) > 0.3 {
		t.Errorf("loss %.3f%%, want 1 ± 0.3", got)
	}
	if s.LastLossNs < 0 || s.LastLossNs > int64(2*time.Second) {
		t.Errorf("last loss at %d ns, want within the 2 s trial", s.LastLossNs)
	}
}

// TestAccuracyTesterLimited: on an unshaped DUT, a rate the generator cannot
// reach is flagged tester-limited, never reported as DUT loss or as passed.
func TestAccuracyTesterLimited(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	e := openEngine(t, portsOf(st))
	r := runTrial(t, e, oneWay(64, 20e6, time.Second))
	if !r.TesterLimited || r.Passed(100) {
		t.Errorf("20 Mfps: tester-limited %v (%q), passed %v; want flagged, not passed", r.TesterLimited, r.TesterLimitReason, r.Passed(100))
	}
	if s := r.Streams[0]; s.OfferedFPS >= 20e6 {
		t.Errorf("offered %.0f fps: more than the generator can send", s.OfferedFPS)
	}
}

// TestAccuracyRelay: a relay DUT delaying by D shows a latency minimum within
// D … D+0.3 ms, and its reorder and duplicate counts match the relay's.
func TestAccuracyRelay(t *testing.T) {
	const d = 2 * time.Millisecond
	st := labtest.New(t, lab.Config{DUT: lab.DUTRelay, Relay: lab.RelayConfig{Delay: d, ReorderPercent: 2,
		ReorderGap: time.Millisecond, DuplicatePercent: 1, Seed: 7}})
	e := openEngine(t, portsOf(st))
	before, err := st.RelayStats()
	if err != nil {
		t.Fatal(err)
	}
	spec := oneWay(64, 5000, 2*time.Second)
	spec.TagAfter = time.Second
	s := runTrial(t, e, spec).Streams[0]
	after, err := st.RelayStats()
	if err != nil {
		t.Fatal(err)
	}
	if min := time.Duration(s.Latency.MinNs); min < d || min > d+300*time.Microsecond {
		t.Errorf("latency min %v, want %v … %v", min, d, d+300*time.Microsecond)
	}
	if s.TaggedLatencyNs < int64(d) {
		t.Errorf("tagged latency %d ns, want ≥ %v", s.TaggedLatencyNs, d)
	}
	dup := after.AtoB.Duplicated - before.AtoB.Duplicated
	reo := after.AtoB.Reordered - before.AtoB.Reordered
	if s.Duplicate != dup || dup == 0 {
		t.Errorf("duplicates: engine %d, relay %d; want equal and non-zero", s.Duplicate, dup)
	}
	if s.Reordered != reo || reo == 0 {
		t.Errorf("reordered: engine %d, relay %d; want equal and non-zero", s.Reordered, reo)
	}
	if s.Lost != 0 {
		t.Errorf("lost %d, want 0", s.Lost)
	}
}

// TestAccuracyBackToBack: bursts at full speed into a shaper with a token
// bucket and a small queue come through with a finite length that the
// shaper's model predicts, burst after burst: bucket + queue + R × the time
// over which the burst reaches the shaper.
//
// TxSeconds runs from the first batch's stamp to when the transmit ring
// emptied after the last frame; each batch of a full-speed burst
// (Config.Batch frames) is stamped once, before the kernel sends it, so the
// last batch (2000 − 7·256 = 208 frames) leaves between its stamp and the
// ring's drain, and frames then cross the DUT's ingress (RPS backlog) before
// its queue. So the arrival time lies between TxSeconds × 1792/2000 (the
// last stamp at the burst's mean speed) and TxSeconds plus the DUT's
// forwarding delay (b2bBounds). One frame each side is the rounding of the
// first and last token. Measured on the 2-CPU lab host: bursts of 2.4–6.0
// ms gave 252–268 frames, each 0–7 above the low end and 1–9 under the
// high end; a burst stalled to 22 ms gave 350 in 346–376. The old model
// (bucket rounded down, R × TxSeconds, ± 8) missed 257–261 on a second
// machine.
func TestAccuracyBackToBack(t *testing.T) {
	const (
		rateBps = 20e6
		bucket  = 20000 // bytes
		limit   = 200   // frames
		frame   = 512
		burst   = 2000
	)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, BurstBytes: bucket, LimitPackets: limit}})
	e := openEngine(t, portsOf(st))
	rFPS := rateBps / ((frame - 4) * 8)
	lastStamp := DefaultBatch * ((burst - 1) / DefaultBatch) // first frame of the last batch
	for i := 0; i < 3; i++ {
		spec := Spec{FrameSize: frame, Streams: []Stream{{ID: 1, Direction: AtoB}}, BurstFrames: burst,
			Settle: 300 * time.Millisecond}
		s := runTrial(t, e, spec).Streams[0]
		if s.Sent != burst {
			t.Fatalf("burst sent %d, want exactly %d", s.Sent, burst)
		}
		checkB2B(t, i, s, rFPS, limit, float64(bucket)/(frame-4), float64(lastStamp)/burst)
	}
}

// b2bDelayFloor is the DUT's forwarding delay before its queue that a
// back-to-back model always allows: quiet runs of the 2-CPU lab host
// measured up to 0.8 ms (see b2bBounds).
const b2bDelayFloor = 1e-3 // s

// b2bBounds is the shaper's model of a burst into a token bucket of
// bucketFrames and a queue of limit frames drained at rFPS: the frames that
// come through are the bucket, the queue, and R × the time over which the
// burst reached the queue, with one frame each side for the rounding of
// the first and last token.
//
// That time starts when the first frame arrives: after its stamp by at most
// its latency, which is the burst's least (it went through the bucket
// unqueued). It ends when the last frame arrives: after the last batch's
// stamp (TxSeconds × stampFrac), and by TxSeconds plus the DUT's delay
// before its queue. That delay is the larger of b2bDelayFloor and the one
// the burst shows: its latest admitted frames joined a full queue and
// waited at most limit/R in it, so the rest of the worst latency is the
// DUT's delay, at least. With the lab's veth the DUT forwards on the
// sender's CPU and may still hold a backlog when the last frame was sent.
//
// Seen in CI on the xdp transport before each term was in the model: a
// 2.76 ms burst reached the queue until ≥ 1.2 ms after its last stamp, 1
// frame over a fixed 1 ms allowance; a burst whose first frame arrived
// 0.48 ms after its stamp came through 0.2 frames under a floor that
// ignored that.
func b2bBounds(s StreamResult, rFPS float64, limit int, bucketFrames, stampFrac float64) (lo, hi, delay float64) {
	fixed := float64(limit) + bucketFrames
	delay = max(b2bDelayFloor, float64(s.Latency.MaxNs)/1e9-float64(limit)/rFPS)
	lo = fixed + rFPS*(s.TxSeconds*stampFrac-float64(s.Latency.MinNs)/1e9) - 1
	hi = fixed + rFPS*(s.TxSeconds+delay) + 1
	return lo, hi, delay
}

// checkB2B fails t when burst i's received count is outside b2bBounds.
func checkB2B(t *testing.T, i int, s StreamResult, rFPS float64, limit int, bucketFrames, stampFrac float64) {
	t.Helper()
	lo, hi, delay := b2bBounds(s, rFPS, limit, bucketFrames, stampFrac)
	if got := float64(s.Received); got < lo || got > hi {
		t.Errorf("burst %d: received %d of %d (stamps over %.2f ms, DUT delay %.2f ms), want %.1f … %.1f (queue %d + bucket %.1f + R × arrival time)",
			i, s.Received, s.Sent, s.TxSeconds*1e3, delay*1e3, lo, hi, limit, bucketFrames)
	}
	t.Logf("burst %d: received %d, model %.1f … %.1f (stamps over %.2f ms, DUT delay %.2f ms)", i, s.Received, lo, hi, s.TxSeconds*1e3, delay*1e3)
}

// TestEngineAnswersARP: with the tester's address removed from port B's
// kernel, the DUT still reaches B because the engine answers its ARP.
func TestEngineAnswersARP(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	if out, err := exec.Command("ip", "-n", st.B.Namespace, "addr", "flush", "dev", st.B.Interface).CombinedOutput(); err != nil {
		t.Fatalf("remove B's address from its kernel: %v %s", err, out)
	}
	e := openEngine(t, portsOf(st))
	if out, err := exec.Command("ip", "-n", st.DUTNamespace, "neigh", "flush", "all").CombinedOutput(); err != nil {
		t.Fatalf("flush DUT neighbours: %v %s", err, out)
	}
	spec := oneWay(64, 1000, 500*time.Millisecond)
	s := runTrial(t, e, spec).Streams[0]
	_, b := e.ARPAnswered()
	if b == 0 {
		t.Errorf("engine answered no ARP request on B")
	}
	// The first frames wait in the DUT for ARP; none may be lost.
	if s.Lost != 0 {
		t.Errorf("lost %d of %d, want 0 (the DUT queues frames while resolving)", s.Lost, s.Sent)
	}
}

// TestAccuracyRecovery: overload a shaped DUT, then drop to half its rate
// (RFC 2544 §26.5): the last loss falls just before the rate change.
func TestAccuracyRecovery(t *testing.T) {
	const rateBps = 20e6
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, LimitPackets: 100}})
	e := openEngine(t, portsOf(st))
	rFPS := rateBps / (508 * 8)
	at := time.Second
	spec := oneWay(512, 1.5*rFPS, 2500*time.Millisecond)
	spec.RateChange = &RateChange{At: at, RateFPS: 0.5 * rFPS}
	s := runTrial(t, e, spec).Streams[0]
	if s.Lost == 0 {
		t.Fatalf("no loss at 150%% of R")
	}
	if got := time.Duration(s.LastLossNs); got < at-100*time.Millisecond || got > at+50*time.Millisecond {
		t.Errorf("last loss at %v, want just before the rate change at %v", got, at)
	}
	// 1 s at 1.5 R plus 1.5 s at 0.5 R.
	if want := uint64(math.Ceil(1.5*rFPS)) + uint64(math.Ceil(1.5*0.5*rFPS)); s.Sent != want {
		t.Errorf("sent %d, want %d", s.Sent, want)
	}
}
