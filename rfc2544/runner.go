package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/wait"
	"github.com/rfc2544/rfc2544/trials"
)

// Observer hears of every trial as it starts and finishes: progress lines,
// the journal. Its methods run on the Runner's goroutine, between trials; a
// slow Observer slows the run. TrialFinished is called only for trials that
// completed (a trial cut short by cancellation or a Tester error is not
// reported finished).
type Observer interface {
	TrialStarted(test Test, frameSize, step int, intendedPercent float64, spec trials.Spec)
	TrialFinished(rec TrialRecord)
}

// Probe parameters (see Plan.NoProbe).
const (
	// ProbeFrames is the burst length of a path probe, per stream.
	ProbeFrames = 100
	// ProbePercent is the probe's load in percent of line rate, raised to
	// ProbeMinFPS frames per second (but never above line rate) so a probe
	// of large frames on a slow link still takes at most 0.1 s.
	ProbePercent = 1.0
	ProbeMinFPS  = 1000.0

	// probeTolerance makes a probe trial pass when any frame of every
	// stream came through (at most 99 of 100 lost).
	probeTolerance = 99.999
)

// Runner runs the procedures of a Plan through a Tester. A Runner is not
// safe for concurrent use; run one procedure at a time.
type Runner struct {
	// Tester runs the trials: the real engine or a SimDUT. Required.
	Tester Tester
	// Plan is the run's plan; its zero fields take the profile's defaults
	// (Plan.WithDefaults), and every procedure validates it before its
	// first trial.
	Plan Plan
	// Observer, when not nil, hears of every trial.
	Observer Observer
	// MaxBps is the rate cap, in L1 bit/s per sending port, always in
	// force (RFC 6815): a trial above it is refused with an error before
	// it reaches the Tester. Zero is the plan's line rate (LinkBps).
	// MaxBpsSource says how it was set, for that error ("" is "the line
	// rate").
	MaxBps       float64
	MaxBpsSource string
	// Sleep waits the rest between trials (Plan.Trial.Rest); nil sleeps for
	// real and returns ctx.Err() when ctx is done first.
	Sleep func(ctx context.Context, d time.Duration) error

	started  int                 // trials started, for the rest between trials
	probes   map[int]ProbeResult // path probe per frame size
	paths    trials.Paths        // paths of the first trial
	hasPaths bool
	res      *Results // the run in progress: probes are recorded there
}

// prepare returns the effective, validated plan.
func (r *Runner) prepare() (Plan, error) {
	p := r.Plan.WithDefaults()
	if r.Tester == nil {
		return p, errors.New("rfc2544 runner: Tester is nil; set the traffic engine or a SimDUT")
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if r.probes == nil {
		r.probes = map[int]ProbeResult{}
	}
	return p, nil
}

// Run runs every test of the plan over every frame size: test by test, each
// over all sizes in order. Throughput runs first for a size whenever
// latency, back-to-back or system recovery need it, and is recorded only
// when the plan asks for it. The results always come back: on cancellation
// or a Tester error they hold what finished, with the interrupted procedure
// marked Incomplete and Results.Error set, alongside the error.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	res := &Results{Schema: SchemaVersion, Tool: "rfc2544", Started: time.Now(), Plan: r.Plan.WithDefaults()}
	finish := func(err error) (*Results, error) {
		res.Finished = time.Now()
		if r.hasPaths {
			res.Tester.Transport = r.paths.Transport
			res.Tester.Paths = r.paths
		}
		if err != nil {
			res.Error = err.Error()
		}
		r.res = nil
		return res, err
	}
	p, err := r.prepare()
	if err != nil {
		return finish(err)
	}
	res.Plan = p
	r.res = res
	r.started = 0
	r.probes = map[int]ProbeResult{}

	tputs := map[int]ThroughputResult{}
	recorded := map[int]bool{}
	wantT := slices.Contains(p.Tests, TestThroughput)
	for _, test := range p.Tests {
		for _, size := range p.FrameSizes {
			var tput ThroughputResult
			if test == TestThroughput || test.needsThroughput() {
				var ok bool
				if tput, ok = tputs[size]; !ok {
					tput, err = r.throughput(ctx, p, size)
					if err != nil {
						if wantT {
							res.Throughput = append(res.Throughput, tput)
						}
						return finish(err)
					}
					tputs[size] = tput
				}
			}
			switch test {
			case TestThroughput:
				if !recorded[size] {
					recorded[size] = true
					res.Throughput = append(res.Throughput, tput)
				}
			case TestLatency:
				var x LatencyResult
				x, err = r.latency(ctx, p, size, tput)
				res.Latency = append(res.Latency, x)
			case TestFrameLoss:
				var x FrameLossResult
				x, err = r.frameLoss(ctx, p, size)
				res.FrameLoss = append(res.FrameLoss, x)
			case TestBackToBack:
				var x BackToBackResult
				x, err = r.backToBack(ctx, p, size, tput)
				res.BackToBack = append(res.BackToBack, x)
			case TestRecovery:
				var x RecoveryResult
				x, err = r.recovery(ctx, p, size, tput)
				res.Recovery = append(res.Recovery, x)
			}
			if err != nil {
				return finish(err)
			}
		}
	}
	return finish(nil)
}

// trialReq is one trial a procedure asks for.
type trialReq struct {
	test            Test
	size, step, rep int
	intendedPercent float64
	tolerance       float64 // loss % a pass may have
	spec            trials.Spec
	goal            string // the mlr goal served
}

// trial rests, runs one trial and classifies it. A trial the Tester marks
// transiently tester-limited (its host stalled the generator: see
// trials.Result.TesterLimitTransient) is run again, up to trial.retries
// times; the Observer hears of every run, the repeated ones marked
// Discarded, and the record returned carries their reasons.
func (r *Runner) trial(ctx context.Context, p Plan, q trialReq) (TrialRecord, error) {
	var discarded []string
	for attempt := 1; ; attempt++ {
		rec, err := r.runOnce(ctx, p, q)
		if err != nil {
			return rec, err
		}
		if attempt > 1 {
			rec.Attempt = attempt
		}
		retry := rec.Outcome == OutcomeTesterLimited && rec.Result.TesterLimitTransient && attempt <= p.Trial.Retries
		if retry {
			rec.Discarded = true
			discarded = append(discarded, rec.TesterLimitReason)
		} else {
			rec.RetryReasons = discarded
		}
		if r.Observer != nil {
			r.Observer.TrialFinished(rec)
		}
		if !retry {
			return rec, nil
		}
	}
}

// runOnce rests and runs one trial.
func (r *Runner) runOnce(ctx context.Context, p Plan, q trialReq) (TrialRecord, error) {
	if r.started > 0 && p.Trial.Rest > 0 {
		sleep := r.Sleep
		if sleep == nil {
			sleep = wait.Sleep
		}
		if err := sleep(ctx, p.Trial.Rest.D()); err != nil {
			return TrialRecord{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return TrialRecord{}, err
	}
	r.started++
	if r.Observer != nil {
		r.Observer.TrialStarted(q.test, q.size, q.step, q.intendedPercent, q.spec)
	}
	err := checkRate(q.spec, r.MaxBps, r.MaxBpsSource, p.LinkBps)
	var res trials.Result
	if err == nil {
		res, err = r.Tester.Run(ctx, q.spec)
	}
	if err != nil {
		return TrialRecord{}, fmt.Errorf("%s trial %d at %d bytes, %.4g%% of line rate: %w", q.test, q.step, q.size, q.intendedPercent, err)
	}
	if !r.hasPaths {
		r.paths, r.hasPaths = res.Paths, true
	}
	return newRecord(p, q, res), nil
}

// newRecord turns a trial result into a search-log row.
func newRecord(p Plan, q trialReq, res trials.Result) TrialRecord {
	t := res.Totals()
	rec := TrialRecord{
		Test:            q.test,
		FrameSize:       q.size,
		Step:            q.step,
		Repetition:      q.rep,
		IntendedPercent: q.intendedPercent,
		IntendedFPS:     t.IntendedFPS,
		OfferedFPS:      t.OfferedFPS,
		BurstFrames:     q.spec.BurstFrames,
		Sent:            t.Sent,
		Received:        t.Received,
		LossPercent:     t.LossPercent(),
		Reordered:       t.Reordered,
		Duplicate:       t.Duplicate,
		Late:            t.Late,
		LatencyMinNs:    t.Latency.MinNs,
		LatencyAvgNs:    t.Latency.MeanNs,
		LatencyMaxNs:    t.Latency.MaxNs,
		DurationS:       q.spec.Duration.Seconds(),
		Goal:            q.goal,
		Result:          res,
	}
	if n := len(res.Streams); n > 0 {
		rec.OfferedPercent = framing.FPSToPercent(t.OfferedFPS/float64(n), p.LinkBps, q.size)
	}
	overload := ""
	if res.TesterLimited && res.TesterLimitTransient {
		overload = overloadExplains(res)
	}
	rec.Overload = overload
	switch {
	case res.TesterLimited && overload == "":
		rec.Outcome = OutcomeTesterLimited
		rec.TesterLimitReason = res.TesterLimitReason
		if rec.TesterLimitReason == "" {
			rec.TesterLimitReason = "the tester reported the trial tester-limited"
		}
	case res.Passed(q.tolerance):
		rec.Outcome = OutcomePass
	default:
		rec.Outcome = OutcomeFail
	}
	if overload != "" {
		rec.TesterLimitReason = res.TesterLimitReason
	}
	if q.test == TestThroughput {
		// A tester-limited trial keeps its outcome, but the criteria
		// still judge the load the tester did offer (a search may count
		// a lossless short trial at that load).
		v := criteria(p.Throughput, res, q.tolerance)
		rec.FailReason, rec.NotSustained, rec.SustainedLossPercent = v.fail, v.notSustained, v.impliedLoss
		if rec.FailReason != "" && rec.Outcome != OutcomeTesterLimited {
			rec.Outcome = OutcomeFail
		}
	}
	return rec
}

// overloadExplains says why a lossy trial that a stall of the tester's host
// could explain is the DUT's loss all the same (trials.Result.Overloaded);
// "" when it is not so.
func overloadExplains(res trials.Result) string {
	if ok, why := res.Overloaded(); ok {
		return why + ": the loss is its own, whatever the tester's stall"
	}
	return ""
}

// lossWithin reports whether every stream sent frames and lost at most
// tolerance percent of them, whatever the tester-limited flag says.
func lossWithin(res trials.Result, tolerance float64) bool {
	if len(res.Streams) == 0 {
		return false
	}
	for _, s := range res.Streams {
		if s.Sent == 0 || s.LossPercent() > tolerance {
			return false
		}
	}
	return true
}

// spec is a timed trial at fps frames per second per stream.
func (p Plan) spec(size int, fps float64) trials.Spec {
	s := trials.Spec{
		FrameSize: size,
		IPv6:      p.IPv6,
		Streams:   []trials.Stream{{ID: 1, Direction: trials.AtoB, Flows: p.Flows}},
		RateFPS:   fps,
		Duration:  p.Trial.Duration.D(),
		Learning:  p.Trial.Learning.D(),
		Settle:    p.Trial.Settle.D(),
	}
	if p.Bidirectional {
		s.Streams = append(s.Streams, trials.Stream{ID: 2, Direction: trials.BtoA, Flows: p.Flows})
	}
	return s
}

// probe sends the path probe of a frame size once per run.
func (r *Runner) probe(ctx context.Context, p Plan, size int) (ProbeResult, error) {
	if p.NoProbe {
		return ProbeResult{FrameSize: size, Passed: true}, nil
	}
	if pr, ok := r.probes[size]; ok {
		return pr, nil
	}
	lr := framing.LineRateFPS(p.LinkBps, size)
	fps := min(lr, max(lr*ProbePercent/100, ProbeMinFPS))
	spec := p.spec(size, fps)
	spec.Duration = 0
	spec.BurstFrames = ProbeFrames
	q := trialReq{test: TestProbe, size: size, step: 1, intendedPercent: fps / lr * 100, tolerance: probeTolerance, spec: spec}
	rec, err := r.trial(ctx, p, q)
	var refused string
	if err != nil {
		if !errors.Is(err, framing.ErrAboveMTU) {
			return ProbeResult{FrameSize: size}, err
		}
		// The tester refused, before sending, a frame larger than its own
		// port's MTU: the first hop cannot carry this size, so not one
		// frame of it crosses the path (§9.4), and the run goes on.
		rec, refused = r.refusedProbe(p, q, err)
	}
	pr := ProbeResult{FrameSize: size, Passed: len(rec.Result.Streams) > 0, Trial: rec}
	for _, s := range rec.Result.Streams {
		if s.Received == 0 {
			pr.Passed = false
		}
	}
	switch {
	case refused != "":
		pr.Passed = false
		pr.Reason = refused
	case !pr.Passed:
		smaller := 0
		for f, o := range r.probes {
			if o.Passed && f < size && f > smaller {
				smaller = f
			}
		}
		if smaller > 0 {
			pr.Reason = fmt.Sprintf("frame size %d does not pass the path (MTU?): none of %d probe frames came through while %d-byte frames did; reported as zero throughput per RFC 2544 §9.4", size, ProbeFrames, smaller)
		} else {
			pr.Reason = fmt.Sprintf("frame size %d does not pass the path (MTU?, or the path is down): none of %d probe frames came through; reported as zero throughput per RFC 2544 §9.4", size, ProbeFrames)
		}
	}
	r.probes[size] = pr
	if r.res != nil {
		r.res.Probes = append(r.res.Probes, pr)
	}
	return pr, nil
}

// refusedProbe records a probe trial the Tester refused with
// framing.ErrAboveMTU as what it means for the path: every stream sent and
// received nothing. The Observer hears of it as a finished trial (so a
// journal keeps the run's trial sequence), and reason names the size and
// the tester port's limit.
func (r *Runner) refusedProbe(p Plan, q trialReq, err error) (rec TrialRecord, reason string) {
	res := trials.Result{Spec: q.spec, Start: time.Now()}
	for _, st := range q.spec.Streams {
		res.Streams = append(res.Streams, trials.StreamResult{ID: st.ID, Direction: st.Direction,
			IntendedFPS: q.spec.RateFPS, TaggedLatencyNs: -1, LastLossNs: -1})
	}
	rec = newRecord(p, q, res)
	if r.Observer != nil {
		r.Observer.TrialFinished(rec)
	}
	var fe *framing.FrameSizeError
	if errors.As(err, &fe) {
		return rec, fmt.Sprintf("frame size %d cannot leave the tester: a tester port's MTU is %d (frames of at most %d bytes); raise the MTU on every hop to at least %d; reported as zero throughput (RFC 2544 §9.4)",
			q.size, fe.MTU, fe.Limit, framing.IPPacketSize(fe.Size, fe.VLAN))
	}
	return rec, fmt.Sprintf("frame size %d cannot leave the tester: %v; reported as zero throughput (RFC 2544 §9.4)", q.size, err)
}
