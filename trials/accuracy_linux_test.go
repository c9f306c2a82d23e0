//go:build linux

package trials

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// Accuracy on the lab: the lab's settings are ground truth.

func oneWay(frame int, rate float64, d time.Duration) Spec {
	return Spec{FrameSize: frame, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: rate, Duration: d,
		Settle: 300 * time.Millisecond}
}

// TestAccuracyShaped (truth claim "shaped-loss"): a DUT shaped to R
// carries a load below R without loss and drops about 1 − R/offered above
// it (less the frames its queue and token bucket absorb). Neither trial may
// be tester-limited, except that a trial the engine marks transiently
// limited (a stall of this shared host) is run again, at most twice: a
// persistent limit, or loss below R, fails. The frame size is drawn.
func TestAccuracyShaped(t *testing.T) {
	c := truth.New(t, "shaped-loss")
	const rateBps = 50e6
	const limit = 100
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./trials"), 0x5a))
	frame := 64 + rng.IntN(1518-64+1)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, LimitPackets: limit}})
	e := openEngine(t, portsOf(st))
	// tbf counts the IP packet plus the Ethernet header: F − 4 bytes.
	rFPS := rateBps / (float64(frame-4) * 8)
	kase := fmt.Sprintf("%d B, R %.0f fps", frame, rFPS)
	rb := runUntrammelled(t, e, oneWay(frame, 0.9*rFPS, 2*time.Second), 3)
	if below := rb.Streams[0]; below.Sent == 0 || rb.TesterLimited {
		t.Errorf("%d B at 90%% of R: sent %d, tester-limited %v (%s); want the DUT's answer", frame, below.Sent, rb.TesterLimited, rb.TesterLimitReason)
	} else {
		c.Within("loss % at 0.9 R", kase, rb.Streams[0].LossPercent(), 0, 0)
	}
	ra := runUntrammelled(t, e, oneWay(frame, 1.5*rFPS, 2*time.Second), 3)
	if ra.TesterLimited {
		t.Fatalf("%d B at 150%% of R: tester-limited (%s), want the DUT's loss", frame, ra.TesterLimitReason)
	}
	above := ra.Streams[0]
	ideal := 100 * (1 - rFPS/above.OfferedFPS)
	// Frames the bucket (burst: max(10 ms at R, 2 frames)), the queue and
	// the DUT's input queue in front of it (netdev_max_backlog, 1000
	// frames, which fills when the DUT's CPU falls behind) absorb beyond
	// R·T reduce the loss a little.
	const backlog = 1000
	slack := 100 * (limit + backlog + 0.01*rFPS + 2) / float64(above.Sent)
	c.Within("loss − (1 − R/offered) at 1.5 R, points", kase, above.LossPercent()-ideal, -slack-1, 1)
}

// TestShapedLossIsTheQdiscs: every frame lost through a shaped DUT
// overloaded to 1.5 × R is one its shaper dropped (tc's own drop counter),
// or one the tester's receiver dropped in its kernel (counted as such):
// the tool's count equals the DUT's, frame for frame, whatever the host's
// stalls did to the rate. The frame size is drawn.
func TestShapedLossIsTheQdiscs(t *testing.T) {
	const rateBps = 30e6
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./trials"), 0x9d))
	frame := 64 + rng.IntN(1518-64+1)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, LimitPackets: 100}})
	e := openEngine(t, portsOf(st))
	rFPS := rateBps / (float64(frame-4) * 8)
	before, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	s := runTrial(t, e, oneWay(frame, 1.5*rFPS, time.Second)).Streams[0]
	after, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	qdisc := after.QdiscDropsAB - before.QdiscDropsAB
	ingress := after.DutA.RxDropped - before.DutA.RxDropped
	t.Logf("%d B at 1.5 R (%.0f fps): lost %d; the shaper dropped %d, the DUT's ingress %d, the tester's kernel %d",
		frame, 1.5*rFPS, s.Lost, qdisc, ingress, s.KernelDrops)
	if s.Lost == 0 || s.Sent != s.Received+s.Lost {
		t.Fatalf("sent %d received %d lost %d: want loss at 1.5 R, every frame sent received or lost", s.Sent, s.Received, s.Lost)
	}
	// The shaper may also drop a frame of the DUT's own (an ARP request
	// to B): at most a few, never fewer than the test frames lost.
	if dut := qdisc + ingress + s.KernelDrops; dut < s.Lost || dut > s.Lost+3 {
		t.Errorf("lost %d, the DUT's and the tester's kernel drops %d: want equal (up to 3 frames of the DUT's own)", s.Lost, dut)
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

// TestAccuracyRandomLoss: a DUT dropping p = 1 % at random loses exactly
// the frames its nftables rule counted (the tester's kernel drops apart),
// 1 ± 0.3 points of 40,000 (six standard deviations: a chance failure once
// in 10^8 runs), and is neither tester-limited nor a pass.
func TestAccuracyRandomLoss(t *testing.T) {
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{LossPercent: 1}})
	e := openEngine(t, portsOf(st))
	before, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	r := runTrial(t, e, oneWay(64, 20000, 2*time.Second))
	after, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	s := r.Streams[0]
	if rule := after.LossDropsAB - before.LossDropsAB; s.Lost != rule+s.KernelDrops {
		t.Errorf("lost %d, the DUT's loss rule dropped %d and the tester's kernel %d: want equal", s.Lost, rule, s.KernelDrops)
	}
	if got := s.LossPercent(); math.Abs(got-1) > 0.3 {
		t.Errorf("loss %.3f%%, want 1 ± 0.3", got)
	}
}

// TestAccuracyTesterLimited: on an unshaped DUT, a rate the generator cannot
// reach is flagged tester-limited for that reason, lastingly (not a stall),
// never reported as passed.
func TestAccuracyTesterLimited(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	e := openEngine(t, portsOf(st))
	r := runTrial(t, e, oneWay(64, 20e6, time.Second))
	if !r.TesterLimited || r.TesterLimitTransient || r.Passed(0) || !strings.Contains(r.TesterLimitReason, "planned frames in time") {
		t.Errorf("20 Mfps: tester-limited %v (transient %v, %q), passed %v; want flagged lastingly for the offered load short of the intended, not passed",
			r.TesterLimited, r.TesterLimitTransient, r.TesterLimitReason, r.Passed(0))
	}
}

// TestAccuracyRelay: through a relay DUT delaying by D, reordering and
// duplicating, the engine's reorder, duplicate and loss counts equal the
// relay's own, and no frame arrives faster than D. (The latency's accuracy
// is the truth claim "relay-latency", TestLatencyRelay.)
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
	if s.Latency.MinNs < int64(d) || s.TaggedLatencyNs < int64(d) {
		t.Errorf("latency min %d ns, tagged %d ns: want ≥ the relay's %v", s.Latency.MinNs, s.TaggedLatencyNs, d)
	}
	a, b := after.AtoB, before.AtoB
	dup, reo := a.Duplicated-b.Duplicated, a.Reordered-b.Reordered
	dropped := a.Dropped - b.Dropped + a.Overflow - b.Overflow + a.SocketDrops - b.SocketDrops + a.SendErrors - b.SendErrors
	if s.Duplicate != dup || dup == 0 {
		t.Errorf("duplicates: engine %d, relay %d; want equal and non-zero", s.Duplicate, dup)
	}
	if s.Reordered != reo || reo == 0 {
		t.Errorf("reordered: engine %d, relay %d; want equal and non-zero", s.Reordered, reo)
	}
	if s.Lost != dropped+s.KernelDrops {
		t.Errorf("lost %d; the relay dropped %d and the tester's kernel %d: want equal", s.Lost, dropped, s.KernelDrops)
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
	c := truth.New(t, "back-to-back")
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
		checkB2B(c, i, s, rFPS, limit, float64(bucket)/(frame-4), float64(lastStamp)/burst)
	}
}

// b2bDelayFloor is the DUT's forwarding delay before its queue that a
// back-to-back model always allows: quiet runs of the 2-CPU lab host
// measured up to 0.8 ms (see b2bBounds); b2bDelayCap the most it allows,
// whatever a burst's worst latency says (a stall of the host, not the
// DUT's forwarding).
const (
	b2bDelayFloor = 1e-3 // s
	b2bDelayCap   = 2e-3 // s
)

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
// before its queue. That delay is the one the burst shows, within
// b2bDelayFloor … b2bDelayCap: its latest admitted frames joined a full
// queue and waited at most limit/R in it, so the rest of the worst latency
// is the DUT's delay, at least. With the lab's veth the DUT forwards on the
// sender's CPU and may still hold a backlog when the last frame was sent.
//
// Seen in CI on the xdp transport before each term was in the model: a
// 2.76 ms burst reached the queue until ≥ 1.2 ms after its last stamp, 1
// frame over a fixed 1 ms allowance; a burst whose first frame arrived
// 0.48 ms after its stamp came through 0.2 frames under a floor that
// ignored that.
func b2bBounds(s StreamResult, rFPS float64, limit int, bucketFrames, stampFrac float64) (lo, hi, delay float64) {
	fixed := float64(limit) + bucketFrames
	delay = min(b2bDelayCap, max(b2bDelayFloor, float64(s.Latency.MaxNs)/1e9-float64(limit)/rFPS))
	lo = fixed + rFPS*(s.TxSeconds*stampFrac-float64(s.Latency.MinNs)/1e9) - 1
	hi = fixed + rFPS*(s.TxSeconds+delay) + 1
	return lo, hi, delay
}

// checkB2B records burst i's received count against b2bBounds in claim c.
func checkB2B(c *truth.Claim, i int, s StreamResult, rFPS float64, limit int, bucketFrames, stampFrac float64) {
	lo, hi, delay := b2bBounds(s, rFPS, limit, bucketFrames, stampFrac)
	mid := (lo + hi) / 2
	c.Ratio("frames through a burst / the shaper's model", fmt.Sprintf("burst %d: stamps over %.2f ms, DUT delay %.2f ms, model %.1f … %.1f", i, s.TxSeconds*1e3, delay*1e3, lo, hi),
		mid, float64(s.Received), lo/mid, hi/mid)
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
	s := runUntrammelled(t, e, spec, 3).Streams[0]
	_, b := e.ARPAnswered()
	if b == 0 {
		t.Errorf("engine answered no ARP request on B")
	}
	// The first frames wait in the DUT for ARP; none may be lost.
	if s.Lost != 0 {
		t.Errorf("lost %d of %d, want 0 (the DUT queues frames while resolving)", s.Lost, s.Sent)
	}
}

// TestAccuracyRecovery (truth claim "recovery"): overload a shaped DUT,
// then drop to half its rate (RFC 2544 §26.5): the last loss falls just
// before the rate change. A trial the engine marks transiently
// tester-limited runs again, at most twice.
func TestAccuracyRecovery(t *testing.T) {
	c := truth.New(t, "recovery")
	const rateBps = 20e6
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps, LimitPackets: 100}})
	e := openEngine(t, portsOf(st))
	rFPS := rateBps / (508 * 8)
	at := time.Second
	spec := oneWay(512, 1.5*rFPS, 2500*time.Millisecond)
	spec.RateChange = &RateChange{At: at, RateFPS: 0.5 * rFPS}
	r := runUntrammelled(t, e, spec, 3)
	if r.TesterLimited {
		t.Fatalf("tester-limited (%s), want the DUT's loss and recovery", r.TesterLimitReason)
	}
	s := r.Streams[0]
	if s.Lost == 0 {
		t.Fatalf("no loss at 150%% of R")
	}
	// 1 s at 1.5 R plus 1.5 s at 0.5 R.
	if want := uint64(math.Ceil(1.5*rFPS)) + uint64(math.Ceil(1.5*0.5*rFPS)); s.Sent != want {
		t.Errorf("sent %d, want %d", s.Sent, want)
	}
	c.Within("last loss − the rate change, ms", "512 B, 20 Mbit/s", float64(s.LastLossNs-int64(at))/1e6, -100, 50)
}
