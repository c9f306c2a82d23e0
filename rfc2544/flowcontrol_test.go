package rfc2544

import (
	"context"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// pushBack is a DUT that forwards at most capFPS and holds the tester back
// above that (flow control): the offered load is what it accepts, and it
// loses nothing. With lossAbove > 0 it also drops that share of what it
// accepts when pushed.
type pushBack struct {
	capFPS    float64
	lossAbove float64
}

func (d pushBack) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	var res trials.Result
	secs := s.Duration.Seconds()
	for _, st := range s.Streams {
		offered := min(s.RateFPS, d.capFPS)
		sent := uint64(offered * secs)
		r := trials.StreamResult{ID: st.ID, Direction: st.Direction, IntendedFPS: s.RateFPS, OfferedFPS: offered,
			TxSeconds: secs, Sent: sent, Received: sent, TaggedLatencyNs: -1, LastLossNs: -1}
		if s.RateFPS > d.capFPS {
			r.Received = sent - uint64(float64(sent)*d.lossAbove)
			res.FlowControlled = true
			res.FlowControlReason = trials.FlowControlNote(offered) + " (port A: the kernel refused 100 of 1000 transmit calls)"
		}
		r.Lost = r.Sent - r.Received
		res.Streams = append(res.Streams, r)
	}
	res.Spec = s
	return res, nil
}

// TestThroughputFlowControlled: a DUT that holds the tester back reports its
// accepted rate as its throughput, with the flow-control note, and is never
// tester-limited.
func TestThroughputFlowControlled(t *testing.T) {
	const capFPS = 24457
	p := testPlan([]Test{TestThroughput}, 64)
	p.NoProbe = true
	r := &Runner{Tester: pushBack{capFPS: capFPS}, Plan: p, Sleep: noSleep}
	res, err := r.Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(logTable(res.Trials))
	if !res.Found || res.TesterLimited {
		t.Fatalf("found %v tester-limited %v: want the DUT's throughput", res.Found, res.TesterLimited)
	}
	if res.FPS < capFPS*0.99 || res.FPS > capFPS {
		t.Errorf("throughput %.0f fps, want the accepted %d fps", res.FPS, capFPS)
	}
	if !strings.HasPrefix(res.Note, "flow-controlled: the DUT held the tester back at ") {
		t.Errorf("note %q", res.Note)
	}
	for _, tr := range res.Trials {
		if tr.Outcome == OutcomeTesterLimited {
			t.Errorf("step %d tester-limited", tr.Step)
		}
	}

	// Held back and lossy: a fail at the offered load, the search goes
	// below it.
	r = &Runner{Tester: pushBack{capFPS: capFPS, lossAbove: 0.01}, Plan: p, Sleep: noSleep}
	res, err = r.Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.TesterLimited || res.FPS > capFPS {
		t.Errorf("lossy push-back: found %v tester-limited %v throughput %.0f fps; want at most %d", res.Found, res.TesterLimited, res.FPS, capFPS)
	}
}

// fcAbove is a buffered SimDUT that holds the tester back to toFPS when
// offered more than aboveFPS (flow control): the lab's tbf behind a veth.
type fcAbove struct {
	sim             *SimDUT
	aboveFPS, toFPS float64
}

func (h *fcAbove) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	want := s.RateFPS
	if s.Duration == 0 || want <= h.aboveFPS {
		return h.sim.Run(ctx, s)
	}
	run := s
	run.RateFPS = h.toFPS
	res, err := h.sim.Run(ctx, run)
	for i := range res.Streams {
		res.Streams[i].IntendedFPS = want
	}
	res.Spec = s
	res.FlowControlled, res.FlowControlReason = true, trials.FlowControlNote(h.toFPS)
	return res, err
}

// TestMLRFlowControlStepsUp: after a flow-controlled trial the search steps
// up from the rate the DUT accepted instead of halving down from the one it
// refused (measured: 14 trials before, 7 after), and still lands within
// the goal width of the capacity.
func TestMLRFlowControlStepsUp(t *testing.T) {
	const size, c = 512, 50.0
	lr := framing.LineRateFPS(testLink, size)
	sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 700}
	h := &fcAbove{sim: sim, aboveFPS: 1.012 * c / 100 * lr, toFPS: 0.9954 * c / 100 * lr}
	p := testPlan([]Test{TestThroughput}, size)
	got, err := (&Runner{Tester: h, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.TesterLimited || got.IntendedPercent < c*0.995 || got.IntendedPercent > c*1.005 || len(got.Trials) > 9 {
		t.Errorf("found %v tester-limited %v at %.3f%% in %d trials: want %g%% ± 0.5 %% in at most 9\n%s",
			got.Found, got.TesterLimited, got.IntendedPercent, len(got.Trials), c, logTable(got.Trials))
	}
}

// TestCriteriaBurstIsNotOverload: a zero-loss trial whose queue grew while
// the DUT forwarded at least the offered rate held a burst (a catch-up, or
// what a DUT that pushes back lets through), not an overload: it passes,
// and implies no loss. One whose sustained rate is below the offered one
// fails a zero-loss goal.
func TestCriteriaBurstIsNotOverload(t *testing.T) {
	old := sustained
	t.Cleanup(func() { sustained = old })
	res := trials.Result{Streams: []trials.StreamResult{{ID: 1, IntendedFPS: 1000, OfferedFPS: 1000, Sent: 1000, Received: 1000}}}
	for _, tt := range []struct {
		fps      float64
		wantFail bool
	}{{1000, false}, {1002, false}, {990, true}, {0, true}} {
		sustained = func(trials.Result) (bool, string, float64) { return false, "queue growing", tt.fps }
		v := criteria(ThroughputConfig{}, res, 0)
		if (v.fail != "") != tt.wantFail || (v.impliedLoss > 0) != tt.wantFail {
			t.Errorf("sustained rate %g of 1000 offered: fail %q implied loss %g; want a failure %v", tt.fps, v.fail, v.impliedLoss, tt.wantFail)
		}
	}
}

// TestBackToBackFlowControlled: behind a DUT that holds the tester back the
// throughput is flow-controlled, and back-to-back is skipped saying why
// (no burst reaches the DUT at line rate), never tester-limited.
func TestBackToBackFlowControlled(t *testing.T) {
	const capFPS = 24457
	p := testPlan([]Test{TestThroughput, TestBackToBack}, 64)
	p.NoProbe = true
	res, err := (&Runner{Tester: pushBack{capFPS: capFPS}, Plan: p, Sleep: noSleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tp, b := res.Throughput[0], res.BackToBack[0]
	if !tp.FlowControlled || tp.TesterLimited {
		t.Fatalf("throughput flow-controlled %v tester-limited %v: want flow-controlled", tp.FlowControlled, tp.TesterLimited)
	}
	if b.TesterLimited || !strings.Contains(b.Skipped, "flow control") || res.TesterLimited() {
		t.Errorf("back-to-back tester-limited %v, skipped %q; results tester-limited %v: want skipped for flow control", b.TesterLimited, b.Skipped, res.TesterLimited())
	}
}

// TestFlowNoteNamesItsTrial: when the search met flow control at a load
// above the one it reports (a DUT that pushes back and loses there), the
// note names the step it was met in, so that its fps is not read as the
// throughput's; when the result's own trial was held back, the note is that
// trial's, its fps the throughput. Both searches.
func TestFlowNoteNamesItsTrial(t *testing.T) {
	const capFPS = 24457
	for _, search := range []Search{SearchMLR, SearchBinary} {
		for _, lossAbove := range []float64{0, 0.01} {
			p := testPlan([]Test{TestThroughput}, 64)
			p.NoProbe = true
			p.Throughput.Search = search
			r := &Runner{Tester: pushBack{capFPS: capFPS, lossAbove: lossAbove}, Plan: p, Sleep: noSleep}
			res, err := r.Throughput(context.Background(), 64)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Found {
				t.Fatalf("%s loss %g: not found: %s", search, lossAbove, res.Reason)
			}
			heldBack := res.FPS >= capFPS*(1-1e-9)
			own := trials.FlowControlNote(res.FPS)
			switch {
			case !res.FlowControlled:
				if strings.Contains(res.Note, "flow-controlled") {
					t.Errorf("%s loss %g: note %q on a result not flow-controlled", search, lossAbove, res.Note)
				}
			case heldBack && !strings.Contains(res.Note, own):
				t.Errorf("%s loss %g: result %.0f fps held back, note %q: want %q", search, lossAbove, res.FPS, res.Note, own)
			case !heldBack && (!strings.Contains(res.Note, "in step ") || !strings.Contains(res.Note, "not held back")):
				t.Errorf("%s loss %g: result %.0f fps below the %d fps the DUT held the tester back at, note %q: want it to name the step and say the result was not held back",
					search, lossAbove, res.FPS, capFPS, res.Note)
			}
			if lossAbove > 0 && res.FPS >= capFPS {
				t.Errorf("%s loss %g: throughput %.0f fps, want below the lossy %d", search, lossAbove, res.FPS, capFPS)
			}
			t.Logf("%s loss %g: %.0f fps flow-controlled %v note %q", search, lossAbove, res.FPS, res.FlowControlled, res.Note)
		}
	}
}
