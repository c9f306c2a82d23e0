package rfc2544

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestValidateGivenZero: Validate refuses a zero that WithDefaults would
// replace, as a *PlanError naming the field, so a plan decoded over
// DefaultPlan cannot have an explicit value silently replaced; a plan after
// WithDefaults is unaffected.
func TestValidateGivenZero(t *testing.T) {
	base, err := DefaultPlan(ProfileRFC2544)
	if err != nil {
		t.Fatal(err)
	}
	base.LinkBps = 1e9
	if err := base.Validate(); err != nil {
		t.Fatalf("default plan: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(*Plan)
		field string
		fix   string
	}{
		{"rest zero", func(p *Plan) { p.Trial.Rest = 0 }, "trial.rest", "zero means the profile's value (5s"},
		{"settle zero", func(p *Plan) { p.Trial.Settle = 0 }, "trial.settle", "zero means the profile's value (2s"},
		{"retries zero", func(p *Plan) { p.Trial.Retries = 0 }, "trial.retries", "zero means the profile's value (2"},
		{"duration zero", func(p *Plan) { p.Trial.Duration = 0 }, "trial.duration", "must be positive"},
		{"initial percent zero", func(p *Plan) { p.Throughput.InitialPercent = 0 }, "throughput.initial_percent", "above 0"},
		{"link nan", func(p *Plan) { p.LinkBps = math.NaN() }, "link_bps", "line rate"},
		{"max trials cap", func(p *Plan) { p.Throughput.MaxTrials = MaxRepetitions + 1 }, "throughput.max_trials", "1 to 1000"},
		{"frame size above jumbo", func(p *Plan) { p.FrameSizes = []int{9217} }, "frame_sizes", "64 to 9216"},
		{"ipv6 frame size", func(p *Plan) { p.IPv6 = true; p.FrameSizes = []int{64} }, "frame_sizes", "84 to 9216"},
		{"one frame time", func(p *Plan) { p.Trial.Duration = Duration(time.Microsecond) }, "trial.duration", "shorter than one frame time"},
		{"burst below a frame", func(p *Plan) { p.BackToBack.BurstCap = Duration(time.Nanosecond) }, "back_to_back.burst_cap", "shorter than one frame time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			p.FrameSizes = append([]int(nil), base.FrameSizes...)
			tt.edit(&p)
			err := p.Validate()
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *PlanError", err)
			}
			if pe.Field != tt.field || !strings.Contains(pe.Fix, tt.fix) {
				t.Errorf("got field %q fix %q, want %q and %q", pe.Field, pe.Fix, tt.field, tt.fix)
			}
		})
	}
}
