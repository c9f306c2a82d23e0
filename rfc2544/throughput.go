package rfc2544

import (
	"context"
	"fmt"
	"math"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// Throughput searches the throughput at one frame size (RFC 2544 §26.1) with
// the plan's search mode, after the path probe of that size:
//
//   - binary: start at initial_percent. A passing trial moves to the midpoint
//     between itself and the lowest failing load above it (or max_percent); a
//     failing trial to the midpoint between itself and the highest passing
//     load below it (or min_percent). The search stops when the highest pass
//     and the lowest fail are within resolution_percent; if no trial has
//     passed by then, min_percent itself is tried, and when it fails too no
//     throughput is reported (Found false) rather than one invented.
//   - step: from start_percent up in step_percent steps until the first
//     failure (or max_percent); the throughput is the last pass.
//   - combo: step, then binary between the last pass and the first failure.
//
// A trial passes when every stream loses at most loss_tolerance_percent.
// A tester-limited trial is neither a pass nor a fail: when its streams lost
// no more than the tolerance, it passed the load the tester did offer, and
// the search goes on between that and the load intended, reporting the
// throughput as at least the best offered load ("≥ X, tester-limited") when
// nothing above could be carried; when the
// DUT lost frames with no receive-side kernel drops, the loss is the DUT's at
// the offered load, which bounds the search from above, and the search goes
// on below it; with kernel drops, or when a stall of the tester's host could
// explain the loss (a transient limit still there after trial.retries runs),
// the loss cannot be blamed on either, and the search goes on below the load
// the tester did carry. Every search
// stops at max_trials; repeated runs of one trial count once.
func (r *Runner) Throughput(ctx context.Context, frameSize int) (ThroughputResult, error) {
	p, err := r.prepare()
	if err != nil {
		return ThroughputResult{FrameSize: frameSize}, err
	}
	return r.throughput(ctx, p, frameSize)
}

func (r *Runner) throughput(ctx context.Context, p Plan, size int) (ThroughputResult, error) {
	n := float64(p.Streams())
	lr := framing.LineRateFPS(p.LinkBps, size)
	out := ThroughputResult{FrameSize: size, LineRateFPS: lr * n}
	pr, err := r.probe(ctx, p, size)
	if err != nil {
		out.Incomplete = true
		out.Reason = "interrupted before the search: " + err.Error()
		return out, err
	}
	if !pr.Passed {
		out.Reason = pr.Reason
		return out, nil
	}
	s := &search{r: r, p: p, size: size, lr: lr, out: &out}
	err = s.run(ctx)
	if err != nil {
		out.Incomplete = true
		out.Found = false
		out.Reason = fmt.Sprintf("search interrupted after %d trials: %v", len(out.Trials), err)
		return out, err
	}
	best := s.conclude()
	if !p.Bidirectional {
		return out, nil
	}
	for _, d := range []trials.Direction{trials.AtoB, trials.BtoA} {
		dt := DirectionThroughput{Direction: d}
		if best != nil {
			if st, ok := best.Result.Direction(d); ok {
				dt.OfferedFPS, dt.ReceivedFPS = st.OfferedFPS, st.ReceivedFPS()
			}
		}
		if p.Throughput.PerDirection {
			alone := ThroughputResult{FrameSize: size, LineRateFPS: lr}
			pd := p
			pd.Bidirectional = false
			as := &search{r: r, p: pd, size: size, lr: lr, out: &alone, dir: d}
			if err := as.run(ctx); err != nil {
				alone.Incomplete = true
				alone.Reason = fmt.Sprintf("search of %v alone interrupted after %d trials: %v", d, len(alone.Trials), err)
				dt.Alone = &alone
				out.Directions = append(out.Directions, dt)
				return out, err
			}
			as.conclude()
			dt.Alone = &alone
		}
		out.Directions = append(out.Directions, dt)
	}
	return out, nil
}

// search is the state of one throughput search. Loads are percent of line
// rate per stream.
type search struct {
	r    *Runner
	p    Plan
	size int
	lr   float64
	out  *ThroughputResult

	pass               *TrialRecord // highest passing trial
	lo, hi             float64      // highest pass, lowest fail (valid with havePass, haveFail)
	havePass, haveFail bool
	limited            *TrialRecord // the tester-limited trial that stopped the search
	limitedOK          bool         // it lost no more than the tolerance
	capped             bool
	flow               *TrialRecord // the latest flow-controlled pass
	lastFailed         bool
	// ceil is the lowest load the tester could not carry cleanly (a
	// tester-limited trial with loss nobody can be blamed for).
	ceil      float64
	haveCeil  bool
	rechecked bool // the search went back to ceil once (next)
	// dir, when set, sends the search's single stream in this direction
	// (a per-direction search of a bidirectional plan).
	dir trials.Direction
	// m is the state of an mlr search.
	m *mlr
}

func (s *search) run(ctx context.Context) error {
	t := s.p.Throughput
	switch t.Search {
	case SearchMLR:
		var err error
		s.m, err = s.mlr(ctx)
		return err
	case SearchStep, SearchCombo:
		stop, err := s.stepUp(ctx)
		if err != nil || stop || t.Search == SearchStep {
			return err
		}
		load, ok := s.next()
		if !ok {
			return nil
		}
		return s.binary(ctx, load)
	default:
		return s.binary(ctx, t.InitialPercent)
	}
}

// try runs one trial at load and updates the bounds; stop is true when the
// search must end (trial cap, tester limit).
func (s *search) try(ctx context.Context, load float64) (stop bool, err error) {
	if len(s.out.Trials) >= s.p.Throughput.MaxTrials {
		s.capped = true
		return true, nil
	}
	tol := s.p.Throughput.LossTolerancePercent
	spec := s.p.spec(s.size, load/100*s.lr)
	if s.dir != 0 {
		spec.Streams[0].Direction = s.dir
	}
	rec, err := s.r.trial(ctx, s.p, trialReq{
		test: TestThroughput, size: s.size, step: len(s.out.Trials) + 1,
		intendedPercent: load, tolerance: tol, spec: spec,
	})
	if err != nil {
		return true, err
	}
	s.out.Trials = append(s.out.Trials, rec)
	s.lastFailed = false
	if s.haveCeil && rec.Outcome != OutcomeTesterLimited && load >= s.ceil*(1-1e-9) {
		// The tester carried a load it could not before: that limit
		// was not its ceiling (a stall, a burst the path held back).
		s.haveCeil, s.limited, s.limitedOK = false, nil, false
	}
	switch rec.Outcome {
	case OutcomePass:
		if rec.Result.FlowControlled {
			// The DUT held the tester back (flow control) and lost
			// nothing: it carried the offered load, not the intended.
			s.fail(load)
			load, s.flow = rec.OfferedPercent, &rec
		}
		if !s.havePass || load > s.lo {
			s.lo, s.pass = load, &rec
		}
		s.havePass = true
	case OutcomeFail:
		if rec.Result.FlowControlled {
			load = rec.OfferedPercent // the DUT lost frames at what it accepted
		}
		s.fail(load)
	case OutcomeTesterLimited:
		t := rec.Result.Totals()
		switch {
		case lossWithin(rec.Result, tol) && rec.FailReason != "" && !rec.Result.TesterLimitTransient:
			// Lossless at the load the tester did offer, but not
			// sustained there (or over max_latency): the DUT's fail.
			s.fail(rec.OfferedPercent)
		case lossWithin(rec.Result, tol):
			// The DUT passed the load the tester did offer; the
			// intended one is out of the tester's reach this time. The
			// search goes on between the two (a short trial near a
			// DUT's limit may be the DUT's backlog holding the sender,
			// or one stall), and reports "≥ X" when nothing above X
			// could be carried.
			s.limited, s.limitedOK = &rec, true
			if c := load; !s.haveCeil || c < s.ceil {
				s.ceil, s.haveCeil = c, true
			}
			if o := rec.OfferedPercent; !s.havePass || o > s.lo {
				s.lo, s.havePass = o, true
			}
			s.lastFailed = false
		case t.KernelDrops == 0 && !rec.Result.TesterLimitTransient && !rec.Result.LossExplained:
			// The DUT lost frames at the load the tester did offer.
			s.fail(rec.OfferedPercent)
		default:
			// Loss nobody can be blamed for: a tester limit never ends
			// the search. Go on below the load the tester did carry,
			// and report the highest clean pass as "≥ X".
			s.limited = &rec
			if c := rec.OfferedPercent; !s.haveCeil || c < s.ceil {
				s.ceil, s.haveCeil = c, true
			}
			s.lastFailed = true
		}
	}
	return false, nil
}

func (s *search) fail(load float64) {
	if !s.haveFail || load < s.hi {
		s.hi = load
	}
	s.haveFail, s.lastFailed = true, true
}

// next is the binary search's next load, or false when it is done.
func (s *search) next() (float64, bool) {
	t := s.p.Throughput
	lo, hi := t.MinPercent, t.MaxPercent
	if s.havePass {
		lo = s.lo
	}
	if s.haveFail {
		hi = s.hi
	}
	if s.haveCeil && s.ceil < hi {
		hi = s.ceil
	}
	if hi-lo <= t.resolution(lo)+1e-9 {
		if s.haveCeil && !s.rechecked && s.ceil > lo && (!s.haveFail || s.hi > s.ceil) {
			// Converged below a tester limit: look at it once more
			// before reporting "≥ X".
			s.rechecked = true
			return s.ceil, true
		}
		if !s.havePass && !(s.haveFail && s.hi <= t.MinPercent) && !(s.haveCeil && s.ceil <= t.MinPercent) {
			return t.MinPercent, true // the minimum itself is still untried
		}
		return 0, false
	}
	return (lo + hi) / 2, true
}

func (s *search) binary(ctx context.Context, load float64) error {
	for {
		stop, err := s.try(ctx, load)
		if err != nil || stop {
			return err
		}
		var ok bool
		if load, ok = s.next(); !ok {
			return nil
		}
	}
}

// stepUp runs the step phase; stop is true when nothing is left to search.
func (s *search) stepUp(ctx context.Context) (stop bool, err error) {
	t := s.p.Throughput
	load := t.StartPercent
	for {
		stop, err := s.try(ctx, load)
		if err != nil || stop {
			return true, err
		}
		if s.lastFailed {
			return false, nil
		}
		if load >= t.MaxPercent {
			return true, nil
		}
		load = math.Min(round9(load+t.StepPercent), t.MaxPercent)
	}
}

// conclude fills the result from the search state and returns the trial
// the throughput was taken from (nil when none was found).
func (s *search) conclude() *TrialRecord {
	if s.m != nil {
		return s.m.conclude()
	}
	out, t := s.out, s.p.Throughput
	best := s.pass
	if s.limited != nil {
		out.TesterLimited = true
		out.TesterLimitReason = s.limited.TesterLimitReason
		if s.limitedOK && (best == nil || s.limited.OfferedFPS > best.OfferedFPS) {
			best = s.limited
		}
	}
	if best == nil {
		switch {
		case s.limited != nil && s.limitedOK:
			out.Reason = fmt.Sprintf("no throughput found: the tester could not reach the intended load (%s) before any trial passed", out.TesterLimitReason)
		case s.limited != nil && !s.haveFail:
			out.Reason = fmt.Sprintf("no throughput found: no load the tester could carry passed down to %g%% of line rate (tester limit above: %s)", t.MinPercent, out.TesterLimitReason)
		case s.capped:
			out.Reason = fmt.Sprintf("no throughput found: no trial passed within the trial cap (throughput.max_trials = %d)", t.MaxTrials)
		case t.Search == SearchStep:
			out.Reason = fmt.Sprintf("no throughput found: the first step (%g%% of line rate) failed; lower throughput.start_percent or use search: combo", t.StartPercent)
		default:
			out.Reason = fmt.Sprintf("no throughput found: even the minimum load, %g%% of line rate, lost %s", t.MinPercent, lossPhrase(t.LossTolerancePercent))
		}
		return nil
	}
	out.Found = true
	out.IntendedPercent = best.IntendedPercent
	out.OfferedPercent = best.OfferedPercent
	out.FPS = best.OfferedFPS
	out.L1Bps = framing.L1Bps(out.FPS, s.size)
	out.L2Bps = framing.L2Bps(out.FPS, s.size)
	out.NotSustained = best.NotSustained
	if s.haveCeil && best != s.limited && (!s.haveFail || s.hi >= s.ceil) {
		out.Note = fmt.Sprintf("≥ %.4g%% of line rate (tester-limited above %.4g%%): the DUT passed every load the tester could carry", out.OfferedPercent, s.ceil)
	} else if s.haveCeil && best != s.limited {
		out.TesterLimited = false // the DUT's own loss bounds the result below the tester limit
		out.Note = fmt.Sprintf("the tester could not carry %.4g%% cleanly (%s); the DUT's loss below that bounds the result", s.ceil, out.TesterLimitReason)
		out.TesterLimitReason = ""
	}
	if s.flow != nil {
		out.Note = joinNotes(out.Note, flowNote(best, s.flow))
		out.FlowControlled = true
	}
	if s.capped {
		hi := "none"
		if s.haveFail {
			hi = fmt.Sprintf("%.4g%%", s.hi)
		}
		out.Note = joinNotes(out.Note, fmt.Sprintf("stopped at the trial cap (throughput.max_trials = %d) before the resolution was reached: highest pass %.4g%%, lowest fail %s", t.MaxTrials, s.lo, hi))
	}
	return best
}

// flowNote is the note of a search that met flow control in trial flow:
// that trial's reason when it is the result's own trial (the fps it names
// is the throughput), else the reason with the step and load it was met at,
// so that its fps is not read as the result's.
func flowNote(best, flow *TrialRecord) string {
	if best.Result.FlowControlled && best.Result.FlowControlReason != "" {
		return best.Result.FlowControlReason
	}
	return fmt.Sprintf("%s, in step %d at %.4g%% of line rate intended; the result's own trial was not held back",
		flow.Result.FlowControlReason, flow.Step, flow.IntendedPercent)
}

// joinNotes joins two notes of a result with "; ", either may be empty.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func lossPhrase(tol float64) string {
	if tol == 0 {
		return "frames"
	}
	return fmt.Sprintf("more than %g%% of its frames", tol)
}

// round9 rounds to 1e-9 so repeated steps of 0.1 do not drift.
func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }
