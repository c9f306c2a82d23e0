package rfc2544

import (
	"testing"
	"time"
)

func TestHighestLoad(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tests  []Test
		max    float64
		want   float64
		wantBy Test
	}{
		{"throughput to 80%", []Test{TestThroughput}, 80, 0.8 * testLink, TestThroughput},
		{"latency searches too", []Test{TestLatency}, 50, 0.5 * testLink, TestThroughput},
		{"frame loss at the line rate", []Test{TestThroughput, TestFrameLoss}, 80, testLink, TestFrameLoss},
		{"back-to-back", []Test{TestBackToBack}, 80, testLink, TestBackToBack},
	} {
		p := testPlan(tt.tests, 64)
		p.Throughput.MaxPercent = tt.max
		if got, by := p.HighestLoad(); got != tt.want || by != tt.wantBy {
			t.Errorf("%s: %g bit/s by %s, want %g by %s", tt.name, got, by, tt.want, tt.wantBy)
		}
	}
}

// TestEstimateRun: one segment per probe, search and test per size, in the
// Runner's order, summed by Estimate.
func TestEstimateRun(t *testing.T) {
	p := testPlan([]Test{TestThroughput, TestLatency}, 64, 1518).WithDefaults()
	segs := p.EstimateRun()
	var got []Test
	for _, s := range segs {
		got = append(got, s.Test)
		if s.Trials <= 0 || s.Each <= 0 {
			t.Errorf("%s at %d: %d trials of %v", s.Test, s.Size, s.Trials, s.Each)
		}
	}
	want := []Test{TestProbe, TestThroughput, TestProbe, TestThroughput, TestLatency, TestLatency}
	if len(got) != len(want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("segments %v, want %v", got, want)
		}
	}
	d, n := p.Estimate()
	var wd time.Duration
	var wn int
	for _, s := range segs {
		wd += time.Duration(s.Trials) * s.Each
		wn += s.Trials
	}
	if d != wd || n != wn {
		t.Errorf("Estimate %v, %d; want %v, %d", d, n, wd, wn)
	}
}
