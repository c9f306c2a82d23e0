package rfc2544

import (
	"math"
	"time"
)

// SearchEstimate is what one throughput search of the plan typically costs
// on a well-behaved DUT: its trial count and its tester time (learning,
// traffic, settle and rest of every trial). The real count depends on the
// DUT; p should have its defaults (WithDefaults).
//
// An mlr search measures, per goal, about three trials in each phase of
// shorter trials and in its final phase, plus one trial per further
// final_duration of duration_sum; further goals mostly reuse the first
// goal's trials and add about two final trials each. A binary search halves
// the range down to the resolution at a DUT of half the line rate; step and
// combo walk the range.
func (p Plan) SearchEstimate() (trials int, d time.Duration) {
	t := p.Throughput
	over := p.Trial.Learning.D() + p.Trial.Settle.D() + p.Trial.Rest.D()
	if t.Search == SearchMLR {
		for gi, g := range p.Goals() {
			chain := targets(gi, g)
			for k, tg := range chain {
				n := 3
				if tg.final {
					n = 2 + int(math.Ceil(tg.sum/tg.dur-1e-9))
				}
				if gi > 0 {
					if !tg.final {
						continue
					}
					n = 2
				}
				if gi == 0 && k == 0 {
					n++ // the first trial, at the maximum load
				}
				trials += n
				d += time.Duration(n) * (secondsDuration(tg.dur) + over)
			}
		}
		return trials, d
	}
	res := t.ResolutionPercent
	if res == 0 {
		res = t.ResolutionRelativePercent / 100 * 50 // at half the line rate
	}
	res = max(res, 0.001)
	binary := int(math.Ceil(math.Log2(max(t.MaxPercent-t.MinPercent, res)/res))) + 1
	switch t.Search {
	case SearchStep:
		trials = int(math.Ceil((t.MaxPercent-t.StartPercent)/max(t.StepPercent, 0.001))) + 1
	case SearchCombo:
		trials = int(math.Ceil((t.MaxPercent-t.StartPercent)/max(t.StepPercent, 0.001))) + int(math.Ceil(math.Log2(t.StepPercent/res))) + 1
	default:
		trials = binary
	}
	trials = max(1, min(trials, t.MaxTrials))
	return trials, time.Duration(trials) * (p.Trial.Duration.D() + over)
}

// Segment is one test at one frame size of a run, as EstimateRun sees it.
type Segment struct {
	Test Test
	Size int
	// Trials is the estimated trial count, Each the estimated tester time
	// of one trial (learning, traffic, settle and rest).
	Trials int
	Each   time.Duration
}

// EstimateRun lists the tests and sizes of a run of p in the order the
// Runner runs them, with the trial counts a typical DUT needs (a throughput
// search's from SearchEstimate). p should have its defaults (WithDefaults).
func (p Plan) EstimateRun() []Segment {
	trialTime := p.Trial.Learning.D() + p.Trial.Duration.D() + p.Trial.Settle.D() + p.Trial.Rest.D()
	var segs []Segment
	probed := map[int]bool{}
	tput := map[int]bool{}
	for _, t := range p.Tests {
		for _, size := range p.FrameSizes {
			if !p.NoProbe && !probed[size] {
				probed[size] = true
				segs = append(segs, Segment{TestProbe, size, 1, p.Trial.Settle.D()})
			}
			if (t == TestThroughput || t == TestLatency || t == TestBackToBack || t == TestRecovery) && !tput[size] {
				tput[size] = true
				n, d := p.SearchEstimate()
				segs = append(segs, Segment{TestThroughput, size, n, d / time.Duration(n)})
			}
			switch t {
			case TestLatency:
				segs = append(segs, Segment{t, size, p.Latency.Repetitions, p.Trial.Learning.D() + p.Latency.Duration.D() + p.Trial.Settle.D() + p.Trial.Rest.D()})
			case TestFrameLoss:
				n := int(math.Ceil(100 / p.FrameLoss.StepPercent))
				if !p.FrameLoss.FullSweep {
					n = min(n, 3)
				}
				segs = append(segs, Segment{t, size, n, trialTime})
			case TestBackToBack:
				steps := int(math.Ceil(math.Log2(100/max(p.BackToBack.MinStepPercent, 0.01)))) + 1
				segs = append(segs, Segment{t, size, p.BackToBack.Repetitions * steps, p.BackToBack.BurstCap.D()/2 + p.Trial.Settle.D() + p.Trial.Rest.D()})
			case TestRecovery:
				segs = append(segs, Segment{t, size, 1, p.Recovery.Overload.D() + p.Recovery.Recovery.D() + p.Trial.Settle.D()})
			}
		}
	}
	return segs
}

// Estimate is the estimated tester time and trial count of a run of p
// (EstimateRun summed).
func (p Plan) Estimate() (d time.Duration, trials int) {
	for _, s := range p.EstimateRun() {
		d += time.Duration(s.Trials) * s.Each
		trials += s.Trials
	}
	return d, trials
}

// HighestLoad is the highest per-port rate, in L1 bit/s, that the trials
// of p may ask for, and the test that asks for it: the frame loss,
// back-to-back and recovery tests send at the line rate, a throughput
// search (and the latency test's) up to throughput.max_percent of it.
func (p Plan) HighestLoad() (bps float64, by Test) {
	for _, t := range p.Tests {
		switch t {
		case TestFrameLoss, TestBackToBack, TestRecovery:
			if p.LinkBps > bps {
				bps, by = p.LinkBps, t
			}
		case TestThroughput, TestLatency:
			max := p.Throughput.MaxPercent
			if max == 0 {
				max = 100
			}
			if v := p.LinkBps * max / 100; v > bps {
				bps, by = v, TestThroughput
			}
		}
	}
	return bps, by
}
