//go:build linux

package lab_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
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

// fwEngine opens the raw engine on a lab's tester ports, its sending
// threads kept off the DUT's CPU as the CLI does.
func fwEngine(t *testing.T, ctx context.Context, st *lab.State) *trials.Engine {
	t.Helper()
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4}
	}
	cfg := trials.Config{A: pc(st.A), B: pc(st.B), QdiscPath: st.TesterQdisc}
	if len(st.DUTCPUs) > 0 && runtime.NumCPU() > 1 {
		cfg.TxCPU, cfg.RxCPU = 1, 1 // CPU 0; the DUT has the last one
	}
	e, err := trials.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the engine: %v", err)
		}
	})
	return e
}

// countedTrial runs one A->B trial of size bytes at rate fps for d and
// returns its result with the DUT's counters before and after it.
func countedTrial(t *testing.T, ctx context.Context, st *lab.State, e rfc2544.Tester, size int, rate float64, d time.Duration) (trials.Result, lab.DUTCounters, lab.DUTCounters) {
	t.Helper()
	c0, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(ctx, trials.Spec{FrameSize: size, RateFPS: rate, Duration: d, Settle: 300 * time.Millisecond,
		Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}})
	if err != nil {
		t.Fatal(err)
	}
	c1, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	return res, c0, c1
}

// fwCapacity is one sample of the ground truth: the DUT's own
// forwarded-packet counter over a trial offered far above what it can carry
// (rate fps for d), divided by the time from the first frame offered to the
// DUT's release of the last (TxSeconds runs to the transmit ring's drain,
// so frames its backlog forwarded after the sender stopped are inside it).
func fwCapacity(t *testing.T, ctx context.Context, st *lab.State, e *trials.Engine, size int, rate float64, d time.Duration) float64 {
	t.Helper()
	var tester rfc2544.Tester = e
	if len(st.DUTCPUs) > 0 {
		tester = cpuWatch{t: t, next: e, cpu: st.DUTCPUs[0]}
	}
	res, c0, c1 := countedTrial(t, ctx, st, tester, size, rate, d)
	s := res.Streams[0]
	fwd := float64(c1.Forwarded4 - c0.Forwarded4)
	capFPS := fwd / s.TxSeconds
	t.Logf("%d B capacity sample: offered %.0f fps for %.3f s, the DUT forwarded %.0f (%.0f fps), dropped at ingress %d; trial flow-controlled %v tester-limited %v",
		size, s.OfferedFPS, s.TxSeconds, fwd, capFPS, c1.DutA.RxDropped-c0.DutA.RxDropped, res.FlowControlled, res.TesterLimited)
	return capFPS
}

// fwTrial is the search's trial duration. A DUT with a buffer of B frames
// (its backlog, netdev_max_backlog) carries a load up to B/fwTrial fps above
// its capacity for a whole trial without loss, unless the sustained-rate
// verdict sees its queue grow.
const fwTrial = 2 * time.Second

// fwSearch runs the throughput search at size between lo and hi fps, to
// within 1 % of hi.
func fwSearch(t *testing.T, ctx context.Context, e rfc2544.Tester, size int, lo, hi float64) rfc2544.ThroughputResult {
	t.Helper()
	const link = 10e9
	pct := func(fps float64) float64 { return framing.FPSToPercent(fps, link, size) }
	r := &rfc2544.Runner{Tester: e, Plan: rfc2544.Plan{
		Profile:    rfc2544.ProfileQuick,
		Tests:      []rfc2544.Test{rfc2544.TestThroughput},
		FrameSizes: []int{size},
		LinkBps:    link,
		NoProbe:    true,
		Trial:      rfc2544.TrialConfig{Duration: rfc2544.Duration(fwTrial), Settle: rfc2544.Duration(300 * time.Millisecond)},
		Throughput: rfc2544.ThroughputConfig{Search: rfc2544.SearchBinary, InitialPercent: pct(hi), MinPercent: pct(lo), MaxPercent: pct(hi),
			ResolutionPercent: pct(hi) / 100, StartPercent: pct(lo), StepPercent: pct(hi) / 10, MaxTrials: 20},
	}}
	res, err := r.Throughput(ctx, size)
	if err != nil {
		t.Fatalf("throughput %d B: %v", size, err)
	}
	for _, tr := range res.Trials {
		t.Logf("  step %d: intended %.0f offered %.0f fps, loss %.3f%%, %s %s %s%s %s", tr.Step, tr.IntendedFPS, tr.OfferedFPS,
			tr.LossPercent, tr.Outcome, tr.FailReason, tr.TesterLimitReason, tr.Result.FlowControlReason, tr.Overload)
	}
	return res
}

// dutTrial is one trial of a search with the DUT's own counters around
// it: what the tester sent and received, and what the DUT forwarded.
type dutTrial struct {
	rate                      float64
	txSeconds                 float64 // the trial's send time (its longest stream's)
	sent, received, forwarded uint64
	testerLimited             bool
	reason                    string
	// overload is set when a trial transiently limited by the tester
	// shows the DUT overloaded whatever the stall (trials.Result.Overloaded,
	// as the rfc2544 runner judges it): the search counts such a trial the
	// DUT's fail, and so does the check.
	overload bool
}

// dutCounted runs each trial between two readings of the DUT's counters,
// so a search's verdicts can be checked against the DUT's ground truth in
// the very trials that made them (a software DUT's capacity on this VM moves
// by more than 10 % within seconds, so a later trial is no referee).
type dutCounted struct {
	st   *lab.State
	next rfc2544.Tester
	// learning is the datagrams a trial sends that the DUT forwards but
	// the tester does not count: the UDP transport's one learning
	// datagram per flow (0 for raw, whose learning frames the DUT answers
	// rather than forwards).
	learning uint64
	trials   []dutTrial
}

func (d *dutCounted) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	c0, err := d.st.DUTCounters()
	if err != nil {
		return trials.Result{}, err
	}
	res, err := d.next.Run(ctx, spec)
	if err != nil {
		return res, err
	}
	c1, err := d.st.DUTCounters()
	if err != nil {
		return res, err
	}
	tot := res.Totals()
	var tx float64
	for _, s := range res.Streams {
		tx = max(tx, s.TxSeconds)
	}
	d.trials = append(d.trials, dutTrial{rate: spec.RateFPS, txSeconds: tx, sent: tot.Sent, received: tot.Received,
		forwarded: c1.Forwarded4 - c0.Forwarded4 - d.learning, testerLimited: res.TesterLimited, reason: res.TesterLimitReason,
		overload: res.TesterLimited && res.TesterLimitTransient && overloaded(res)})
	return res, nil
}

// TestFirewallThroughputIsTheDUTs: through a firewall DUT of N linear rules
// (N drawn at 200–5000, stateful or not, 64 or 512 bytes, all drawn), the
// throughput is the DUT's (found, not tester-limited), and the DUT's own
// counters, read around every trial of the search, confirm it:
//   - in every trial that was not tester-limited, the frames the tester
//     counted received are exactly those the DUT forwarded (the loss it
//     reports is the DUT's drops, frame for frame);
//   - the DUT forwarded every frame of the result's trial (the throughput is
//     at most its capacity);
//   - the DUT dropped frames in a trial of the search offered at most 1.1×
//     the throughput, or such a trial failed the sustained-rate verdict (its
//     queue grew): so the throughput is at least 0.9× its capacity.
//
// The rate the DUT forwards at a tenfold overload is logged, and bounds the
// search's range, but is not that capacity: on this VM the lab DUT forwards
// in larger batches when its backlog is full, and idles 20–29 % of its CPU
// at overload while dropping 60 %. Nor is a referee trial run after the
// search: CI on 2026-12-01 (295b1b8, 4451 rules, 64 B) passed 17,718 fps
// for 2 s without loss, and 8 s later the DUT dropped 7 % of 16,832 fps
// (0.95×) over 5 s, its CPU 14 % idle. Truth claim "firewall-bracket".
func TestFirewallThroughputIsTheDUTs(t *testing.T) {
	c := truth.New(t, "firewall-bracket")
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./lab"), 0))
	// One rule base per run, stateful or not drawn too (CI's time: each
	// takes about 65 s).
	stateful, n := rng.IntN(2) == 1, 200+rng.IntN(4801)
	// One of 64 and 512 B per run, drawn (CI's time: 20 s each).
	size := []int{64, 512}[rng.IntN(2)]
	t.Logf("stateful %v, %d rules, %d B", stateful, n, size)
	st := labtest.New(t, lab.Config{FWRules: n, FWStateful: stateful})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	e := fwEngine(t, ctx, st)
	var inner rfc2544.Tester = e
	if len(st.DUTCPUs) > 0 {
		inner = cpuWatch{t: t, next: e, cpu: st.DUTCPUs[0]}
	}
	// Overload: ten times what a DUT of n rules was seen to carry
	// on this box (about 7e7/n fps), at least 100 kfps; what the
	// DUT forwards there bounds the search's range.
	over := fwCapacity(t, ctx, st, e, size, max(10*7e7/float64(n), 100e3), time.Second)
	d := &dutCounted{st: st, next: inner}
	res := fwSearch(t, ctx, d, size, 0.3*over, 1.3*over)
	t.Logf("%d rules (stateful %v), %d B: throughput %.0f fps = %.3f × the overload forwarding rate %.0f fps; found %v tester-limited %v %s",
		n, stateful, size, res.FPS, res.FPS/over, over, res.Found, res.TesterLimited, res.Note)
	if !res.Found || res.TesterLimited {
		t.Fatalf("%d B: found %v tester-limited %v (%s): want the DUT's throughput", size, res.Found, res.TesterLimited, res.TesterLimitReason)
	}
	checkDUTVerdicts(t, c, fmt.Sprintf("raw, %d rules (stateful %v), %d B", n, stateful, size), size, res, d.trials)
}

// checkDUTVerdicts holds a search's result and trials against the DUT's
// counters of the same trials (dutCounted; see
// TestFirewallThroughputIsTheDUTs): frame for frame in every trial (a
// failure of t), and the bracket the DUT's drops give the throughput in
// claim c.
func checkDUTVerdicts(t *testing.T, c *truth.Claim, kase string, size int, res rfc2544.ThroughputResult, dut []dutTrial) {
	t.Helper()
	// The result's trial: the passing one whose offered rate is FPS.
	at := -1.0
	for _, tr := range res.Trials {
		if tr.Outcome == rfc2544.OutcomePass && tr.OfferedFPS == res.FPS {
			at = tr.IntendedFPS
		}
	}
	var resultSeen bool
	above := math.Inf(1) // the lowest rate above the result the DUT dropped at
	for _, k := range dut {
		dropped := int64(k.sent) - int64(k.forwarded)
		t.Logf("  %d B at %.0f fps: sent %d, the DUT forwarded %d (dropped %d), received %d; tester-limited %v %s",
			size, k.rate, k.sent, k.forwarded, dropped, k.received, k.testerLimited, k.reason)
		if k.received != k.forwarded && (!k.testerLimited || k.overload) {
			t.Errorf("%d B at %.0f fps: the tester counted %d received, the DUT forwarded %d: want the loss it reports to be the DUT's drops exactly",
				size, k.rate, k.received, k.forwarded)
		}
		if k.testerLimited && !k.overload {
			continue
		}
		// A trial the engine judged overloaded though the tester stalled
		// (CI under stress-ng on 2026-12-02: a 76.8 ms lag, and the DUT
		// forwarding 4.37 % below the offered load while its queue was
		// busy) is a drop the DUT made.
		if dropped > 0 && k.rate > at {
			above = min(above, k.rate)
		}
		if math.Abs(k.rate-at) <= 1e-9*at && dropped == 0 && !k.testerLimited {
			resultSeen = true
		}
	}
	if !resultSeen {
		t.Errorf("%d B: no trial at the throughput's intended rate %.0f fps in which the DUT forwarded every frame: the throughput is above its capacity", size, at)
	}
	// A trial above the result that lost nothing but whose queue grew
	// bounds the capacity as well as a drop does.
	for _, tr := range res.Trials {
		if tr.NotSustained != "" && tr.IntendedFPS > at {
			above = min(above, tr.IntendedFPS)
		}
	}
	c.Ratio("the lowest rate above the throughput the DUT dropped at (or did not sustain) / the throughput", kase, res.FPS, above, 1, 1.1)
}

// TestFirewallFrameLossIsTheDUTs: the frame loss sweep (RFC 2544 §26.3)
// through a firewall DUT of N rules (N and the frame size drawn at test
// time), on a link whose line rate is 2.5× the DUT's capacity so the steps
// run from far above it to half of it, has no tester-limited point: near
// and below its capacity the DUT's backlog still held the last frames of a
// trial tens of milliseconds after the sender queued them on time, which
// once made an on-time sender look 2-5 % short (run --lab --fw-rules 3000
// exited 3). Each point's loss is the DUT's drops, frame for frame (its
// counters around the trial). Truth claim "firewall-frame-loss".
func TestFirewallFrameLossIsTheDUTs(t *testing.T) {
	c := truth.New(t, "firewall-frame-loss")
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./lab"), 0))
	n, size := 200+rng.IntN(4801), 64+rng.IntN(1518-64+1)
	t.Logf("%d rules, %d B", n, size)
	st := labtest.New(t, lab.Config{FWRules: n})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := fwEngine(t, ctx, st)
	capFPS := fwCapacity(t, ctx, st, e, size, max(10*7e7/float64(n), 100e3), time.Second)
	link := framing.L1Bps(2.5*capFPS, size)
	d := &dutCounted{st: st, next: e}
	r := &rfc2544.Runner{Tester: d, Plan: rfc2544.Plan{
		Profile:    rfc2544.ProfileQuick,
		Tests:      []rfc2544.Test{rfc2544.TestFrameLoss},
		FrameSizes: []int{size},
		LinkBps:    link,
		NoProbe:    true,
		Trial:      rfc2544.TrialConfig{Duration: rfc2544.Duration(time.Second), Settle: rfc2544.Duration(300 * time.Millisecond)},
		FrameLoss:  rfc2544.FrameLossConfig{StepPercent: 20, FullSweep: true},
	}}
	res, err := r.FrameLoss(ctx, size)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 5 || res.Points[0].LossPercent == 0 {
		t.Fatalf("%d points %+v: want five, the first (2.5× the DUT's capacity) lossy", len(res.Points), res.Points)
	}
	limited := 0
	for i, pt := range res.Points {
		tr := res.Trials[i]
		t.Logf("  %.0f %% (%.0f fps): offered %.0f fps, loss %.3f%%, %s %s%s", pt.IntendedPercent, tr.IntendedFPS, pt.OfferedFPS, pt.LossPercent,
			tr.Outcome, tr.TesterLimitReason, tr.Result.FlowControlReason+tr.Result.OverloadReason)
		if pt.TesterLimited {
			limited++
			t.Logf("%.0f %% of a line rate 2.5× the DUT's capacity: tester-limited (%s; max lag %.1f ms; %+v)",
				pt.IntendedPercent, tr.TesterLimitReason, float64(tr.Result.Streams[0].MaxLagNs)/1e6, tr.Result.TxPressure)
		}
	}
	for _, k := range d.trials {
		if k.received != k.forwarded && !k.testerLimited {
			t.Errorf("%d B at %.0f fps: the tester counted %d received, the DUT forwarded %d: want the loss it reports to be the DUT's drops exactly",
				size, k.rate, k.received, k.forwarded)
		}
	}
	c.Within("points tester-limited, of 5 (the DUT's capacity ×2.5 … ×0.5)", fmt.Sprintf("%d rules, %d B", n, size), float64(limited), 0, 0)
}

// TestFirewallPushBackIsFlowControlled: on the push-back lab mode a DUT of N
// rules holds the sender back; the trial is flow-controlled, never
// tester-limited, and the search reports the DUT's rate with the note:
// the rate the DUT forwarded in the result's trial (its own counter over
// the trial's send time). Truth claim "firewall-push-back".
func TestFirewallPushBackIsFlowControlled(t *testing.T) {
	c := truth.New(t, "firewall-push-back")
	n := 200 + rand.New(rand.NewPCG(testseed.Seed(t, "./lab"), 0)).IntN(4801)
	t.Logf("%d rules", n)
	st := labtest.New(t, lab.Config{FWRules: n, DUTBackpressure: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := fwEngine(t, ctx, st)
	res, err := e.Run(ctx, trials.Spec{FrameSize: 64, RateFPS: 1e6, Duration: time.Second, Settle: 300 * time.Millisecond,
		Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offered %.0f fps, loss %.3f%%; %+v; flow-controlled %v %q; tester-limited %v %q", res.Streams[0].OfferedFPS, res.LossPercent(),
		res.TxPressure, res.FlowControlled, res.FlowControlReason, res.TesterLimited, res.TesterLimitReason)
	if !res.FlowControlled || res.TesterLimited || !strings.HasPrefix(res.FlowControlReason, "flow-controlled: the DUT held the tester back at ") {
		t.Fatalf("flow-controlled %v, tester-limited %v: want a flow-controlled trial", res.FlowControlled, res.TesterLimited)
	}
	d := &dutCounted{st: st, next: e}
	sr := fwSearch(t, ctx, d, 64, 1e3, 1e6)
	t.Logf("throughput %.0f fps, note %q", sr.FPS, sr.Note)
	if !sr.Found || sr.TesterLimited || !strings.HasPrefix(sr.Note, "flow-controlled:") {
		t.Fatalf("search: found %v tester-limited %v note %q: want the DUT's throughput with the flow-control note", sr.Found, sr.TesterLimited, sr.Note)
	}
	var at float64
	for _, tr := range sr.Trials {
		if tr.Outcome == rfc2544.OutcomePass && tr.OfferedFPS == sr.FPS {
			at = tr.IntendedFPS
		}
	}
	fwd := 0.0
	for _, k := range d.trials {
		t.Logf("  at %.0f fps: sent %d, the DUT forwarded %d in %.3f s (%.0f fps)", k.rate, k.sent, k.forwarded, k.txSeconds, float64(k.forwarded)/k.txSeconds)
		if math.Abs(k.rate-at) <= 1e-6*at && k.txSeconds > 0 {
			fwd = float64(k.forwarded) / k.txSeconds
		}
	}
	c.Ratio("throughput / the rate the DUT forwarded in that trial", fmt.Sprintf("%d rules, push-back", n), fwd, sr.FPS, 0.99, 1.01)
	for _, tr := range sr.Trials {
		if tr.Outcome != rfc2544.OutcomeTesterLimited {
			continue
		}
		if strings.HasPrefix(tr.TesterLimitReason, "port B: the receiving side dropped") {
			// The tester's receiver, not its sender, fell behind (with
			// one CPU kept busy, CI on 2026-12-01: 150 frames dropped
			// by b0's input queue at 206 kfps): a true tester limit,
			// not push-back taken for one.
			t.Logf("step %d tester-limited at the receiver: %s", tr.Step, tr.TesterLimitReason)
			continue
		}
		t.Errorf("step %d tester-limited on a DUT that pushes back: %s", tr.Step, tr.TesterLimitReason)
	}
}

// TestUnshapedLabIsTesterLimited: through a DUT with no rules (the default
// lab), 64-byte frames at 10 Gbit/s line rate are beyond this tester: the
// trial is tester-limited, not flow-controlled.
func TestUnshapedLabIsTesterLimited(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := fwEngine(t, ctx, st)
	res, err := e.Run(ctx, trials.Spec{FrameSize: 64, RateFPS: framing.LineRateFPS(10e9, 64), Duration: time.Second,
		Settle: 300 * time.Millisecond, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offered %.0f fps; %+v; flow-controlled %v %q; tester-limited %v %q", res.Streams[0].OfferedFPS, res.TxPressure,
		res.FlowControlled, res.FlowControlReason, res.TesterLimited, res.TesterLimitReason)
	if w := e.PauseWarnings(); len(w) > 0 {
		t.Errorf("veth ports have no flow control, yet: %q", w)
	}
	if len(res.TxPressure) != 1 || res.TxPressure[0].PauseCounted {
		t.Errorf("tx pressure %+v: want one port, without PAUSE counters (veth)", res.TxPressure)
	}
	if !res.TesterLimited || res.FlowControlled {
		t.Errorf("tester-limited %v, flow-controlled %v: want tester-limited", res.TesterLimited, res.FlowControlled)
	}
}

// TestFirewallRuleSets: a stateful rule base with N linear rules and a set
// of M addresses (N and M drawn at test time) is installed as configured,
// and test traffic through it is accepted by the explicit new-flow rule
// (one-way UDP stays "new" in conntrack), neither dropped as invalid nor
// matched by the set.
func TestFirewallRuleSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./lab"), 0))
	n, m := 200+rng.IntN(4801), 1000+rng.IntN(99001)
	t.Logf("%d rules, set of %d addresses", n, m)
	st := labtest.New(t, lab.Config{FWRules: n, FWStateful: true, FWSet: m})
	rules, elems, err := lab.NftablesSize(st)
	if err != nil {
		t.Fatal(err)
	}
	// ct established/related, ct invalid, the set lookup, n rules, the
	// IPv4 and IPv6 new-flow accepts.
	if rules != n+5 || elems != m {
		t.Errorf("forward chain has %d rules and the set %d addresses; want %d and %d", rules, elems, n+5, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := fwEngine(t, ctx, st)
	res, c0, c1 := countedTrial(t, ctx, st, e, 64, 2000, time.Second)
	s := res.Streams[0]
	acc := c1.Accepted - c0.Accepted
	t.Logf("sent %d received %d; accepted %d, invalid drops %d, set drops %d", s.Sent, s.Received, acc, c1.InvalidDrops-c0.InvalidDrops, c1.SetDrops-c0.SetDrops)
	if s.Lost != 0 || s.Sent == 0 {
		t.Errorf("sent %d, lost %d at 2000 fps: want none lost", s.Sent, s.Lost)
	}
	if acc < s.Received || c1.InvalidDrops != c0.InvalidDrops || c1.SetDrops != c0.SetDrops {
		t.Errorf("accepted %d of %d received; invalid drops %d, set drops %d: want every frame accepted by the rule base",
			acc, s.Received, c1.InvalidDrops-c0.InvalidDrops, c1.SetDrops-c0.SetDrops)
	}
}

// udpFwEngine opens the UDP engine on a lab's tester namespaces, its
// sending thread kept off the DUT's CPU as fwEngine's.
func udpFwEngine(t *testing.T, ctx context.Context, st *lab.State) *trials.UDPEngine {
	t.Helper()
	return udpFwEngineBuf(t, ctx, st, 0)
}

// udpFwEngineBuf is udpFwEngine with socket buffers of buf bytes (0: the
// default).
func udpFwEngineBuf(t *testing.T, ctx context.Context, st *lab.State, buf int) *trials.UDPEngine {
	t.Helper()
	cfg := trials.UDPConfig{
		SocketBuffer: buf,
		A:            trials.UDPPortConfig{Namespace: st.A.Namespace, Addr: st.A.IPv4.Addr()},
		B:            trials.UDPPortConfig{Namespace: st.B.Namespace, Addr: st.B.IPv4.Addr()},
		PathMTU:      min(st.A.MTU, st.B.MTU),
	}
	if len(st.DUTCPUs) > 0 && runtime.NumCPU() > 1 {
		cfg.TxCPU = 1 // CPU 0; the DUT has the last one
	}
	u, err := trials.OpenUDP(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil { // idempotent
			t.Errorf("close the udp engine: %v", err)
		}
	})
	return u
}

// TestUDPFirewallIsTheDUTs: the UDP transport through a firewall DUT of N
// rules (N drawn at 1000–5000; the lab's default, dropping DUT, or the
// push-back mode, drawn too) blames the DUT, not itself: a trial at ten
// times what the DUT carries is not tester-limited, and the search at 64 B
// finds the DUT's throughput, checked against the DUT's own counters as
// the raw transport's is (checkDUTVerdicts). N starts at 1000, not 200 as
// for raw: with fewer rules the DUT outruns the udp transport's receiver
// on this 2-CPU host (CI on 2026-12-02, 312 rules: the DUT forwarded 151
// kfps at overload, the receiving socket overflowed from 123 kfps on and
// the search ended tester-limited, rightly); at 1000 rules raw measured
// 69,884 fps of 64 B. Truth claim "firewall-bracket".
func TestUDPFirewallIsTheDUTs(t *testing.T) {
	c := truth.New(t, "firewall-bracket")
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./lab"), 0))
	n, push := 1000+rng.IntN(4001), rng.IntN(2) == 1
	t.Logf("%d rules, push-back lab %v", n, push)
	st := labtest.New(t, lab.Config{FWRules: n, DUTBackpressure: push})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	u := udpFwEngine(t, ctx, st)
	const size = 64
	res, c0, c1 := countedTrial(t, ctx, st, u, size, max(10*7e7/float64(n), 100e3), time.Second)
	s := res.Streams[0]
	over := float64(c1.Forwarded4-c0.Forwarded4) / s.TxSeconds
	t.Logf("overload: offered %.0f of %.0f fps, loss %.2f%%, the DUT forwarded %.0f fps; %+v; flow-controlled %v %q; overload %q; tester-limited %v %q",
		s.OfferedFPS, s.IntendedFPS, res.LossPercent(), over, res.TxPressure, res.FlowControlled, res.FlowControlReason, res.OverloadReason, res.TesterLimited, res.TesterLimitReason)
	if res.TesterLimited && !res.TesterLimitTransient {
		t.Errorf("a trial at ten times the DUT's capacity is tester-limited (%s): want the DUT's loss or flow control", res.TesterLimitReason)
	}
	d := &dutCounted{st: st, next: u, learning: 1} // one flow
	sr := fwSearch(t, ctx, d, size, 0.3*over, 1.3*over)
	t.Logf("%d rules, %d B over udp: throughput %.0f fps = %.3f × the overload forwarding rate; found %v tester-limited %v %s",
		n, size, sr.FPS, sr.FPS/over, sr.Found, sr.TesterLimited, sr.Note)
	if !sr.Found || sr.TesterLimited {
		t.Fatalf("found %v tester-limited %v (%s): want the DUT's throughput", sr.Found, sr.TesterLimited, sr.TesterLimitReason)
	}
	checkDUTVerdicts(t, c, fmt.Sprintf("udp, %d rules (push-back %v), %d B", n, push, size), size, sr, d.trials)

	// A send buffer smaller than what the DUT's input queue holds (1000
	// frames): an overrun DUT on the default lab keeps the datagrams in
	// its backlog charged to the socket, so the sender waits for room,
	// held back by the path. That is flow control, not a tester limit.
	if push {
		return
	}
	if err := u.Close(); err != nil { // its receive ports
		t.Fatal(err)
	}
	small := udpFwEngineBuf(t, ctx, st, 512<<10)
	fr, _, _ := countedTrial(t, ctx, st, small, size, max(10*7e7/float64(n), 100e3), time.Second)
	t.Logf("overload with a 512 KiB send buffer: offered %.0f of %.0f fps, loss %.2f%%; %+v; flow-controlled %v %q; tester-limited %v %q",
		fr.Streams[0].OfferedFPS, fr.Streams[0].IntendedFPS, fr.LossPercent(), fr.TxPressure, fr.FlowControlled, fr.FlowControlReason, fr.TesterLimited, fr.TesterLimitReason)
	if !fr.FlowControlled || fr.TesterLimited {
		t.Errorf("a 512 KiB send buffer through an overrun DUT: flow-controlled %v, tester-limited %v (%s): want flow-controlled",
			fr.FlowControlled, fr.TesterLimited, fr.TesterLimitReason)
	}
}

// overloaded is trials.Result.Overloaded's verdict alone.
func overloaded(r trials.Result) bool {
	ok, _ := r.Overloaded()
	return ok
}
