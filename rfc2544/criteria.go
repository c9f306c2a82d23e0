package rfc2544

import (
	"fmt"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// This file holds the pass criteria a throughput trial must meet besides
// its loss, in every search mode: the trial was sustained (its queue did
// not grow through it), and its latency stayed under throughput.max_latency.

// sustained reports whether the DUT forwarded a trial's load without its
// queue growing through the trial; when not, why, and the rate it does
// sustain (all streams; 0: unknown).
//
// Tests replace the variable to drive the verdict.
var sustained = func(r trials.Result) (ok bool, reason string, sustainedFPS float64) {
	ok, v := r.Sustained()
	return ok, v.Reason, v.SustainedFPS
}

// verdict is what the pass criteria found in a throughput trial.
type verdict struct {
	// fail is why a trial that lost no more than the tolerance still
	// fails (empty: it passes): not sustained, or over max_latency.
	fail string
	// notSustained is why the queue of a zero-loss trial grew (set even
	// when allow_buffering lets it pass).
	notSustained string
	// impliedLoss is, for a zero-loss trial that was not sustained, the
	// loss in percent a trial long enough to fill the queue would show:
	// 1 − sustained rate / offered rate (100 when the rate is unknown, and
	// never 0). Zero otherwise, and with allow_buffering.
	impliedLoss float64
	// latency is set when the trial broke max_latency: a failure for
	// every goal.
	latency bool
}

// criteria applies the pass criteria besides loss to a throughput trial
// with tolerance percent of loss. The sustained-rate verdict is about
// zero-loss trials (a lossy trial's queue is full and its loss speaks): such
// a trial not sustained fails every goal whose loss is below the loss it
// implies (every zero-loss goal, NDR, always), unless allow_buffering.
func criteria(t ThroughputConfig, res trials.Result, tolerance float64) verdict {
	var v verdict
	tot := res.Totals()
	// A queue that grew while the DUT forwarded at least what it was
	// offered (the rate it sustained measured at or above the offered
	// load) held a burst, not an overload: the tester's catch-up after a
	// stall, or the bursts a DUT that pushes back lets through.
	if ok, why, fps := sustained(res); !ok && tot.Lost == 0 && !(fps > 0 && fps >= tot.OfferedFPS) {
		if why == "" {
			why = "the queue grew through the trial"
		}
		v.notSustained = "not sustained: " + why
		if !t.AllowBuffering {
			v.impliedLoss = 100
			if fps > 0 && tot.OfferedFPS > 0 {
				v.impliedLoss = max(100*(1-fps/tot.OfferedFPS), 1e-9)
			}
			if v.impliedLoss > tolerance {
				v.fail = v.notSustained + " (use --allow-buffering to accept it)"
			}
		}
	}
	if v.fail == "" && t.MaxLatency > 0 {
		if v.fail = latencyOver(t, res); v.fail != "" {
			v.latency = true
		}
	}
	return v
}

// latencyOver is why a trial's latency broke throughput.max_latency, or "".
func latencyOver(t ThroughputConfig, res trials.Result) string {
	pc := t.LatencyPercentile
	if pc == 0 {
		pc = 100
	}
	for _, s := range res.Streams {
		l := s.Latency
		if l.Count == 0 {
			continue
		}
		var v int64
		switch pc {
		case 50:
			v = l.P50Ns
		case 90:
			v = l.P90Ns
		case 99:
			v = l.P99Ns
		case 99.9:
			v = l.P999Ns
		default:
			v = l.MaxNs
		}
		if v > t.MaxLatency.D().Nanoseconds() {
			return fmt.Sprintf("latency %s %v above throughput.max_latency %v", percentileName(pc), time.Duration(v), t.MaxLatency)
		}
	}
	return ""
}

func percentileName(pc float64) string {
	if pc == 100 {
		return "max"
	}
	return fmt.Sprintf("P%g", pc)
}

// validateCriteria checks the resolution and the latency bound.
func (t ThroughputConfig) validateCriteria() error {
	bad := func(field string, v any, fix string) error {
		return &PlanError{Field: "throughput." + field, Value: v, Fix: fix}
	}
	if t.ResolutionPercent == 0 && t.ResolutionRelativePercent == 0 || t.ResolutionPercent != 0 && !(t.ResolutionPercent > 0 && t.ResolutionPercent <= 100) {
		return bad("resolution_percent", t.ResolutionPercent, "a resolution is above 0 and at most 100 points of line rate; or set resolution_relative_percent")
	}
	if t.ResolutionPercent == 0 && !(t.ResolutionRelativePercent >= 0.001 && t.ResolutionRelativePercent <= 50) {
		return bad("resolution_relative_percent", t.ResolutionRelativePercent, "use 0.001 to 50 percent of the current lower bound, e.g. 0.5, or set resolution_percent")
	}
	if t.MaxLatency < 0 {
		return bad("max_latency", t.MaxLatency, "must be positive (e.g. 30us) or left out for no latency bound")
	}
	switch t.LatencyPercentile {
	case 0, 50, 90, 99, 99.9, 100:
	default:
		return bad("latency_percentile", t.LatencyPercentile, "use 50, 90, 99, 99.9 or 100 (the maximum)")
	}
	return nil
}

// resolution is the binary search's stopping distance, in points of line
// rate, when lo is the highest pass so far.
func (t ThroughputConfig) resolution(lo float64) float64 {
	if t.ResolutionPercent > 0 {
		return t.ResolutionPercent
	}
	if lo <= 0 {
		lo = t.MinPercent
	}
	return lo * t.ResolutionRelativePercent / 100
}
