package rfc2544

import (
	"context"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// TestRateCap: a trial above the Runner's rate cap is refused before it
// reaches the Tester; one below it runs.
func TestRateCap(t *testing.T) {
	spec := trials.Spec{FrameSize: 64, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, Duration: 1e9}
	spec.RateFPS = 700000 // 470 Mbit/s L1
	if err := checkRate(spec, 500e6, "--max-rate", testLink); err != nil {
		t.Errorf("below the cap: %v", err)
	}
	spec.RateFPS = 800000 // 537.6 Mbit/s L1
	if err := checkRate(spec, 500e6, "--max-rate", testLink); err == nil || !strings.Contains(err.Error(), "rate cap") {
		t.Errorf("above the cap: got %v", err)
	}
	spec.RateFPS, spec.BurstFrames = 0, 1000 // a burst at the tester's speed
	if err := checkRate(spec, 500e6, "--max-rate", testLink); err != nil {
		t.Errorf("burst with no rate: %v", err)
	}

	// Through the Runner: the frame loss test starts at the line rate,
	// above a 500 Mbit/s cap, so no trial reaches the simulator.
	sim := &SimDUT{LinkBps: testLink}
	r := &Runner{Tester: sim, Plan: testPlan([]Test{TestFrameLoss}, 64), Sleep: noSleep, MaxBps: 500e6, MaxBpsSource: "--max-rate"}
	r.Plan.NoProbe = true
	if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "rate cap") {
		t.Errorf("run above the cap: got %v", err)
	}
	if got := sim.Trials(); got != 0 {
		t.Errorf("the simulator ran %d trials, want 0 (the refused one must not reach it)", got)
	}
	// With the default cap, the line rate, the same run passes.
	r = &Runner{Tester: sim, Plan: r.Plan, Sleep: noSleep}
	if _, err := r.Run(context.Background()); err != nil {
		t.Errorf("run at the line rate: %v", err)
	}
}
