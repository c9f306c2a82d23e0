package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// This file is MLRsearch (RFC 9971), written from the specification's text:
// the load classification of its Appendix A and the conditional throughput
// of its Appendix B are the RFC's formulas; the choice of the next load is
// ours (the RFC leaves it to the implementation).
//
// Each goal is searched through a chain of targets: preceding targets with
// short trials, a single trial deciding a load, and twice the width per
// step back from the final one; then the goal itself (final trial duration,
// duration sum). Trials of any target count for every target and goal,
// through the classification (a short high-loss trial can make an upper
// bound; a short low-loss trial alone never makes a final lower bound).

// mlrTrial is one trial as the classification sees it.
type mlrTrial struct {
	dur     float64 // trial duration, s (the Trial Effective Duration)
	loss    float64 // loss ratio, the worst stream's
	failAll bool    // failed a pass criterion: high-loss for every goal
	fwdFPS  float64 // forwarding rate, all streams
	offPct  float64 // offered load, percent of line rate per stream
	rec     int     // index in the search log
	seq     int     // order measured
}

// mlrLoad is every trial at one load (percent of line rate per stream).
type mlrLoad struct {
	load   float64
	trials []mlrTrial
	limits int // tester-limited trials intended at this load
}

// mlrTarget is one phase of one goal.
type mlrTarget struct {
	goal     int
	name     string  // "NDR final", "NDR 1/2"
	loss     float64 // goal loss ratio
	exceed   float64
	width    float64 // relative
	dur, sum float64 // trial duration and duration sum, s
	final    bool
	up, down int // expansion steps taken from the newest bound
}

// targets builds a goal's chain, coarsest first. The durations grow by 4×
// and the widths halve from one target to the next.
func targets(gi int, g Goal) []*mlrTarget {
	fin, ini := g.FinalDuration.D().Seconds(), g.InitialDuration.D().Seconds()
	n := 0
	if ini < fin {
		n = int(math.Ceil(math.Log2(fin/ini) / 2))
	}
	var out []*mlrTarget
	for k := n; k >= 1; k-- {
		d := fin * math.Pow(ini/fin, float64(k)/float64(n))
		out = append(out, &mlrTarget{goal: gi, name: fmt.Sprintf("%s %d/%d", g.Name, n-k+1, n+1),
			loss: g.LossPercent / 100, exceed: g.ExceedRatio, width: g.WidthPercent / 100 * math.Pow(2, float64(k)),
			dur: d, sum: d})
	}
	return append(out, &mlrTarget{goal: gi, name: g.Name + " final", loss: g.LossPercent / 100, exceed: g.ExceedRatio,
		width: g.WidthPercent / 100, dur: fin, sum: g.DurationSum.D().Seconds(), final: true})
}

// class is a load's classification for one target.
type class int

const (
	undecided class = iota
	lowerBound
	upperBound
)

// classify is RFC 9971 Appendix A for the trials at one load.
func (tg *mlrTarget) classify(ts []mlrTrial) class {
	var fullLow, fullHigh, shortLow, shortHigh float64
	for _, t := range ts {
		high := t.failAll || t.loss > tg.loss
		full := t.dur >= tg.dur*(1-1e-9)
		switch {
		case full && high:
			fullHigh += t.dur
		case full:
			fullLow += t.dur
		case high:
			shortHigh += t.dur
		default:
			shortLow += t.dur
		}
	}
	coef := tg.exceed / (1 - tg.exceed)
	excess := max(0, shortHigh-shortLow*coef)
	effHigh := fullHigh + excess
	effFull := fullLow + effHigh
	whole := max(effFull, tg.sum)
	quantile := whole * tg.exceed
	pessimistic := whole-fullLow <= quantile*(1+1e-12)
	optimistic := effHigh <= quantile*(1+1e-12)
	switch {
	case pessimistic && optimistic:
		return lowerBound
	case !pessimistic && !optimistic:
		return upperBound
	}
	return undecided
}

// conditional is RFC 9971 Appendix B: the forwarding rate at the goal's
// exceed-ratio quantile of loss among the full-length trials at a load.
// The rate is the trial's own (offered × (1 − loss)), not the intended
// load's, so a short-sent trial is never credited with frames it did not
// offer.
func (tg *mlrTarget) conditional(ts []mlrTrial) float64 {
	var full []mlrTrial
	var sum float64
	for _, t := range ts {
		if t.dur >= tg.dur*(1-1e-9) {
			full = append(full, t)
			sum += t.dur
		}
	}
	slices.SortStableFunc(full, func(a, b mlrTrial) int {
		return cmpFloat(a.effLoss(), b.effLoss())
	})
	remaining := max(tg.sum, sum) * (1 - tg.exceed)
	rate, set := 0.0, false
	for _, t := range full {
		if set && remaining <= 0 {
			break
		}
		rate, set = t.fwdFPS, true
		if t.failAll {
			rate = 0
		}
		remaining -= t.dur
	}
	if remaining > 1e-9 {
		return 0
	}
	return rate
}

func (t mlrTrial) effLoss() float64 {
	if t.failAll {
		return 1
	}
	return t.loss
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mlr is the state of one MLRsearch.
type mlr struct {
	s        *search
	goals    []Goal
	chains   [][]*mlrTarget
	at       []int // current target per goal
	loads    []*mlrLoad
	seq      int
	maxLoad  float64 // lowered below a tester limit
	limited  bool    // a tester limit lowered maxLoad
	limitRun int     // tester-limited trials in a row
	ceil     float64 // the lowest load the tester could not carry
	capped   bool
	// limitAt is the lowest intended load of a tester-limited trial;
	// rechecked says the search went back there once, after converging
	// below it, to see whether the limit holds (a stall, or a burst the
	// path held back, is not the tester's ceiling).
	limitAt   float64
	rechecked bool
	carried   float64 // the highest load of a trial not tester-limited
}

func (m *mlr) min() float64 { return m.s.p.Throughput.MinPercent }

// at returns the entry of load l, creating it.
func (m *mlr) entry(l float64) *mlrLoad {
	for _, e := range m.loads {
		if math.Abs(e.load-l) <= 1e-9*max(1, l) {
			return e
		}
	}
	e := &mlrLoad{load: l}
	m.loads = append(m.loads, e)
	slices.SortFunc(m.loads, func(a, b *mlrLoad) int { return cmpFloat(a.load, b.load) })
	return e
}

// bounds are a target's relevant bounds (RFC 9971 §4.6.1, §4.6.2) among
// the loads up to maxLoad, and the undecided measured loads between them.
func (m *mlr) bounds(tg *mlrTarget) (lb, ub *mlrLoad, open []*mlrLoad) {
	for _, e := range m.loads {
		if tg.classify(e.trials) == upperBound {
			ub = e
			break
		}
	}
	for _, e := range m.loads {
		if ub != nil && e.load >= ub.load {
			break
		}
		if e.load > m.maxLoad*(1+1e-9) {
			break
		}
		switch tg.classify(e.trials) {
		case lowerBound:
			lb = e
		case undecided:
			if len(e.trials) > 0 {
				open = append(open, e)
			}
		}
	}
	if lb != nil {
		k := 0
		for _, e := range open {
			if e.load > lb.load {
				open[k] = e
				k++
			}
		}
		open = open[:k]
	}
	return lb, ub, open
}

// step is a target's next trial: the load, and its expansion counters
// once the trial is run.
type step struct {
	load     float64
	up, down int
	recheck  bool // a second look at the tester limit (mlr.limitAt)
}

// next is the trial the target wants next; ok false when the target is
// done. It changes nothing: the caller applies the step it runs.
//
// A fresh load comes from the bounds: with none, the maximum load (or the
// previous target's lower bound); with a lower bound only, steps up from it
// that double; with an upper bound only, the forwarding rate seen there
// less the goal's loss, then steps down that double; with both, a step that
// makes the interval exactly the width when it is within twice the width,
// else the forwarding-rate hint of a newest upper bound, steps up from a
// newest lower bound, or the logarithmic midpoint. An undecided load already
// measured (RFC 9971: more trials decide it within the duration sum) is
// preferred to a fresh one near it.
func (m *mlr) next(tg *mlrTarget, prev *mlrTarget) (st step, ok bool) {
	lb, ub, open := m.bounds(tg)
	lo, hi := m.min(), m.maxLoad
	if ub != nil && ub.load > hi*(1+1e-9) {
		// Below a tester limit the search ends at what the tester can
		// carry: an upper bound above it is out of reach.
		ub = nil
	}
	var from float64 // the bound the fresh load steps from (0: none)
	switch {
	case lb == nil && ub == nil:
		st.load = hi
		if m.limitRun > 0 {
			// Below a tester limit, steps down that double until a
			// load the tester can carry.
			st.load = max(lo, m.ceil*max(0.5, 1-tg.width*math.Pow(2, float64(m.limitRun))))
		}
		if prev != nil {
			if plb, pub, _ := m.bounds(prev); plb != nil {
				st.load = plb.load
			} else if pub != nil {
				st.load = pub.load
			}
		}
	case ub == nil:
		if m.limited && (hi-lb.load)/hi <= tg.width {
			if tg.final && !m.rechecked && m.limitAt > hi {
				// Converged below the tester limit: look at it once
				// more before reporting "≥ X".
				return step{load: m.limitAt, recheck: true}, true
			}
			return step{}, false // within the width of what the tester can carry
		}
		if lb.load >= hi*(1-1e-9) {
			return step{}, false // the maximum load is a lower bound
		}
		from = lb.load
		st = step{load: min(hi, stepUp(lb.load, tg.width, tg.up)), up: tg.up + 1}
	case lb == nil:
		if ub.load <= lo*(1+1e-9) {
			return step{}, false // even the minimum load is an upper bound
		}
		from = ub.load
		st = step{load: max(lo, ub.load*max(0.5, 1-tg.width*math.Pow(2, float64(tg.down)))), down: tg.down + 1}
		if f := m.forwardingPercent(ub) * (1 - tg.loss); tg.down == 0 && f > 0 && f < ub.load*(1-tg.width) {
			st = step{load: max(lo, f), down: 1}
		}
	default:
		w := (ub.load - lb.load) / ub.load
		mid := math.Sqrt(lb.load * ub.load)
		switch {
		case w <= tg.width*(1+1e-9):
			return step{}, false
		case w <= 2*tg.width:
			st.load = ub.load * (1 - tg.width)
		case last(lb) > last(ub):
			st = step{load: min(mid, stepUp(lb.load, tg.width, tg.up)), up: tg.up + 1}
		default:
			st.load = mid
			if f := m.forwardingPercent(ub) * (1 - tg.loss); f > lb.load*(1+tg.width) && f < ub.load*(1-tg.width) {
				st.load = f
			}
		}
	}
	// Below a tester limit, nothing above what the tester can carry (a
	// previous target's bound may be above it).
	st.load = min(st.load, hi)
	if len(open) == 0 {
		return st, true
	}
	near := open[0]
	for _, e := range open {
		if math.Abs(math.Log(e.load/st.load)) < math.Abs(math.Log(near.load/st.load)) {
			near = e
		}
	}
	// An open load between the bound stepped from and the step (or near
	// the step without one) is preferred; one beyond the step is not: the
	// step is sized so that a result there meets the width, and a load
	// past it would leave the interval a hair too wide for one more trial.
	// One just past the load that would make the interval exactly the
	// width gives way to that load.
	between := from == 0 || (near.load-from)*(st.load-near.load) >= -1e-9*st.load*st.load
	if between && (from == 0 || math.Abs(math.Log(near.load/st.load)) <= math.Abs(math.Log(st.load/from))) {
		if from > 0 {
			ex := from / (1 - tg.width) // stepping up from a lower bound
			if near.load < from {
				ex = from * (1 - tg.width) // down from an upper bound
			}
			if d := math.Abs(math.Log(near.load / from)); d > math.Abs(math.Log(ex/from))*(1+1e-9) && d < 2*math.Abs(math.Log(ex/from)) {
				return step{load: ex, up: st.up, down: st.down}, true
			}
		}
		return step{load: near.load, up: tg.up, down: tg.down}, true
	}
	return st, true
}

// stepUp is the load the k-th step up from a lower bound lb tries: one
// whose interval above lb is exactly the width w relative to it (so a
// failure there ends the search), doubling the width with each step and
// at most doubling the load.
func stepUp(lb, w float64, k int) float64 {
	return lb / (1 - min(0.5, w*math.Pow(2, float64(k))))
}

func last(e *mlrLoad) int {
	n := -1
	for _, t := range e.trials {
		n = max(n, t.seq)
	}
	return n
}

// forwardingPercent is the highest forwarding rate measured at a load, per
// stream in percent of line rate.
func (m *mlr) forwardingPercent(e *mlrLoad) float64 {
	var f float64
	for _, t := range e.trials {
		if !t.failAll {
			f = max(f, t.fwdFPS)
		}
	}
	return f / float64(m.s.p.Streams()) / m.s.lr * 100
}

// run is the search loop: the unfinished target with the shortest trials
// (then the first goal) chooses the next trial.
func (s *search) mlr(ctx context.Context) (*mlr, error) {
	t := s.p.Throughput
	goals := s.p.Goals()
	m := &mlr{s: s, goals: goals, maxLoad: t.MaxPercent, at: make([]int, len(goals))}
	for i, g := range goals {
		m.chains = append(m.chains, targets(i, g))
	}
	maxTrials := t.MaxTrials * len(goals)
	for {
		var pick *mlrTarget
		var next step
		for gi, chain := range m.chains {
			for {
				tg := chain[m.at[gi]]
				var prev *mlrTarget
				if m.at[gi] > 0 {
					prev = chain[m.at[gi]-1]
				}
				st, ok := m.next(tg, prev)
				if !ok {
					if !tg.final {
						m.at[gi]++
						continue
					}
					break
				}
				if pick == nil || tg.dur < pick.dur {
					pick, next = tg, st
				}
				break
			}
		}
		if pick == nil {
			return m, nil
		}
		if len(s.out.Trials) >= maxTrials {
			m.capped = true
			return m, nil
		}
		pick.up, pick.down = next.up, next.down
		m.rechecked = m.rechecked || next.recheck
		if err := m.measure(ctx, pick, next.load); err != nil {
			return m, err
		}
	}
}

// measure runs one trial for tg at load and files it.
func (m *mlr) measure(ctx context.Context, tg *mlrTarget, load float64) error {
	s := m.s
	g := m.goals[tg.goal]
	spec := s.p.spec(s.size, load/100*s.lr)
	spec.Duration = secondsDuration(tg.dur)
	if s.dir != 0 {
		spec.Streams[0].Direction = s.dir
	}
	rec, err := s.r.trial(ctx, s.p, trialReq{
		test: TestThroughput, size: s.size, step: len(s.out.Trials) + 1,
		intendedPercent: load, tolerance: g.LossPercent, spec: spec, goal: tg.name,
	})
	if err != nil {
		return err
	}
	s.out.Trials = append(s.out.Trials, rec)
	m.seq++
	res := rec.Result
	tr := mlrTrial{dur: tg.dur, seq: m.seq, offPct: rec.OfferedPercent, rec: len(s.out.Trials) - 1}
	for _, st := range res.Streams {
		tr.loss = max(tr.loss, st.LossPercent()/100)
		tr.fwdFPS += st.ReceivedFPS()
	}
	// A trial over max_latency fails every goal; one not sustained counts
	// with the loss its sustained rate implies (every zero-loss goal fails
	// it).
	tr.failAll = rec.FailReason != "" && rec.SustainedLossPercent == 0
	if l := rec.SustainedLossPercent / 100; l > 0 {
		tr.loss = max(tr.loss, l)
		tr.fwdFPS *= 1 - l
	}
	at := load
	if rec.Outcome == OutcomeTesterLimited {
		tot := res.Totals()
		if tot.KernelDrops > 0 || res.TesterLimitTransient || res.LossExplained || lossWithin(res, 0) && rec.FailReason == "" {
			// Nobody can be blamed for the loss, or the tester could not
			// offer the load: a tester limit never ends the search; it
			// goes on below the load the tester did carry.
			// Limits in a row step down faster (the offered rate may
			// be far above what the tester can carry).
			w := tg.width
			for _, gl := range m.goals {
				w = min(w, gl.WidthPercent/100)
			}
			m.limitRun++
			m.ceil = rec.OfferedPercent
			if m.limited {
				m.ceil = min(m.ceil, m.maxLoad)
			}
			// Never below a load it carried cleanly before; but a load
			// met with a limit twice is out of reach (or the search could
			// propose it again and again).
			e := m.entry(load)
			e.limits++
			cand := max(rec.OfferedPercent*(1-w), m.carried)
			if e.limits > 1 {
				cand = min(cand, load*(1-w))
			}
			m.maxLoad = min(m.maxLoad, max(m.min(), cand))
			m.limited = true
			if m.limitAt == 0 || load < m.limitAt {
				m.limitAt = load
			}
			s.limited = &rec
			return nil
		}
		// The DUT lost frames at the load the tester did offer, or lost
		// none but did not sustain it: a trial at that load.
		at = rec.OfferedPercent
	}
	if res.FlowControlled && rec.Outcome != OutcomeTesterLimited && rec.OfferedPercent < load {
		// The DUT held the tester back (flow control): it refused the
		// intended load, an upper bound for every goal, and the trial
		// measured the load it did accept.
		up := tr
		up.failAll, up.loss = true, 1-rec.OfferedPercent/load
		// Filed as measured before the accepted load's trial, so the
		// search steps up from the rate the DUT accepted rather than
		// halving down from the refused one.
		up.seq--
		m.entry(load).trials = append(m.entry(load).trials, up)
		at = rec.OfferedPercent
		s.flow = &s.out.Trials[tr.rec]
	}
	m.limitRun = 0
	if m.limited && load > m.maxLoad*(1+1e-9) {
		// The tester carried a load above the limit it met before: that
		// limit was not its ceiling (a stall, a held-back burst). Lift
		// it, or the trials above it would never count as bounds.
		m.maxLoad, m.limited, m.ceil, s.limited = s.p.Throughput.MaxPercent, false, 0, nil
	}
	if rec.Outcome != OutcomeTesterLimited {
		m.carried = max(m.carried, at)
	}
	e := m.entry(at)
	e.trials = append(e.trials, tr)
	return nil
}

// limitedBetween is the last trial (not discarded) at a load strictly
// between lo and hi (percent) that met a lasting tester limit, or nil. A
// transient one (a stall of the tester's host, rerun up to trial.retries)
// says the load was not measured, not that the tester cannot carry it: the
// goal is then irregular, not tester-limited.
func (m *mlr) limitedBetween(lo, hi float64) *TrialRecord {
	var last *TrialRecord
	for i := range m.s.out.Trials {
		r := &m.s.out.Trials[i]
		if r.Outcome == OutcomeTesterLimited && !r.Discarded && !r.Result.TesterLimitTransient &&
			r.IntendedPercent > lo*(1+1e-9) && r.IntendedPercent < hi*(1-1e-9) {
			last = r
		}
	}
	return last
}

// conclude fills each goal's result and the legacy fields from the first,
// and returns the last trial at the first goal's relevant lower bound.
func (m *mlr) conclude() *TrialRecord {
	s, out := m.s, m.s.out
	n := float64(s.p.Streams())
	for gi, g := range m.goals {
		tg := m.chains[gi][len(m.chains[gi])-1]
		lb, ub, _ := m.bounds(tg)
		gr := GoalResult{Goal: g}
		if ub != nil {
			gr.HasUpper = true
			gr.UpperPercent = ub.load
			gr.UpperFPS = ub.load / 100 * s.lr * n
		}
		var notes []string
		if lb != nil {
			gr.Found = true
			gr.LowerPercent = lb.load
			gr.LowerFPS = lb.load / 100 * s.lr * n
			gr.ConditionalFPS = tg.conditional(lb.trials)
			gr.L1Bps = framing.L1Bps(gr.ConditionalFPS, s.size)
			gr.L2Bps = framing.L2Bps(gr.ConditionalFPS, s.size)
			gr.Regular = ub != nil && (ub.load-lb.load)/ub.load <= tg.width*(1+1e-9)
			if ub == nil && m.limited {
				gr.TesterLimited = true
				notes = append(notes, fmt.Sprintf("≥ %.4g%% of line rate (tester-limited above %.4g%%)", lb.load, m.maxLoad))
			} else if ub == nil {
				notes = append(notes, fmt.Sprintf("irregular: the maximum load %.4g%% is a lower bound (no upper bound)", lb.load))
			} else if !gr.Regular {
				if tl := m.limitedBetween(lb.load, ub.load); tl != nil {
					// The search could not narrow the bounds because
					// the tester could not carry the loads between
					// them (it stopped at the trial cap): what is
					// known is a lower bound, ≥ X.
					gr.TesterLimited = true
					if s.limited == nil {
						s.limited = tl
					}
					notes = append(notes, fmt.Sprintf("≥ %.4g%% of line rate (tester-limited between it and the upper bound %.4g%%, at %.4g%%)", lb.load, ub.load, tl.IntendedPercent))
				} else {
					notes = append(notes, fmt.Sprintf("irregular: bounds %.4g%%…%.4g%% wider than the goal width %g%%", lb.load, ub.load, g.WidthPercent))
				}
			}
		} else {
			switch {
			case ub != nil && ub.load <= m.min()*(1+1e-9):
				notes = append(notes, fmt.Sprintf("no throughput found: even the minimum load, %g%% of line rate, is an upper bound (loses %s)", m.min(), lossPhrase(g.LossPercent)))
			default:
				notes = append(notes, "no throughput found: no load was classified a lower bound")
			}
		}
		if m.capped {
			notes = append(notes, fmt.Sprintf("stopped at the trial cap (throughput.max_trials = %d per goal)", s.p.Throughput.MaxTrials))
		}
		gr.Note = strings.Join(notes, "; ")
		out.Goals = append(out.Goals, gr)
	}
	first := out.Goals[0]
	out.Found = first.Found
	if !first.Found {
		out.Reason = first.Note
		if m.limited && s.limited != nil {
			out.Reason += fmt.Sprintf(" (tester limit above %.4g%%: %s)", m.maxLoad, s.limited.TesterLimitReason)
		}
		return nil
	}
	lb := m.entry(first.LowerPercent)
	best := &out.Trials[lb.trials[len(lb.trials)-1].rec]
	out.IntendedPercent = first.LowerPercent
	out.OfferedPercent = best.OfferedPercent
	out.FPS = first.ConditionalFPS
	out.L1Bps, out.L2Bps = first.L1Bps, first.L2Bps
	out.Note = first.Note
	if s.flow != nil {
		out.Note = joinNotes(out.Note, flowNote(best, s.flow))
		out.FlowControlled = true
	}
	if first.TesterLimited {
		out.TesterLimited = true
		out.TesterLimitReason = s.limited.TesterLimitReason
	}
	// The latency test runs at the first goal's lower bound: record
	// whether its trials there were sustained.
	for i := range out.Trials {
		r := &out.Trials[i]
		if r.NotSustained != "" && math.Abs(r.IntendedPercent-first.LowerPercent) <= 1e-9*max(1, first.LowerPercent) {
			out.NotSustained = r.NotSustained
		}
	}
	return best
}

// secondsDuration converts seconds to a Duration-compatible time.Duration,
// rounded to the microsecond.
func secondsDuration(s float64) time.Duration {
	return time.Duration(math.Round(s*1e6)) * time.Microsecond
}
