package rfc2544

import (
	"testing"
	"time"
)

// TestETA: the estimate starts at the whole run, drops by one trial's time
// per trial of a segment, and skips the segments passed over.
func TestETA(t *testing.T) {
	p, err := DefaultPlan("quick")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithDefaults()
	p.Tests, p.FrameSizes, p.LinkBps = []Test{TestThroughput, TestFrameLoss}, []int{64, 1518}, 1e9
	segs := p.EstimateRun()
	var total time.Duration
	for _, s := range segs {
		total += time.Duration(s.Trials) * s.Each
	}
	e := NewETA(p)
	if e.Left() != total || total <= 0 {
		t.Fatalf("Left() = %v before the first trial, want the run's %v", e.Left(), total)
	}
	first := segs[0]
	e.TrialStarted(first.Test, first.Size)
	if want := total - first.Each; e.Left() != want {
		t.Errorf("after one trial of %s %d: %v, want %v", first.Test, first.Size, e.Left(), want)
	}
	last := segs[len(segs)-1]
	e.TrialStarted(last.Test, last.Size)
	if want := time.Duration(last.Trials-1) * last.Each; e.Left() != want {
		t.Errorf("in the last segment: %v, want %v", e.Left(), want)
	}
}
