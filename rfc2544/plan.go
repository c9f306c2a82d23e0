package rfc2544

import (
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("60s", "500ms") in JSON and YAML plans and results.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like 60s, 500ms or 2m", b)
	}
	*d = Duration(v)
	return nil
}

// Plan is everything a run needs to know besides the ports: which tests, which
// frame sizes, and the parameters of every procedure. The zero value of each
// field means its documented default (see DefaultPlan); a Plan is embedded in
// every Results so a run can be reproduced. Field names are the YAML plan's.
type Plan struct {
	// Profile names the preset the plan started from: "rfc2544" or "quick".
	Profile string `json:"profile,omitempty" yaml:"profile,omitempty"`
	// Tests to run, in order. Default: throughput, latency, frame_loss,
	// back_to_back.
	Tests []Test `json:"tests" yaml:"tests"`
	// FrameSizes in bytes, FCS included. Default: 64, 128, 256, 512, 1024,
	// 1280, 1518 (RFC 2544 §9.1).
	FrameSizes []int `json:"frame_sizes" yaml:"frame_sizes"`
	// LinkBps is the line rate that percentages refer to, in bits per second
	// per port (e.g. 1e9). Required: a veth has no line rate of its own.
	LinkBps float64 `json:"link_bps" yaml:"link_bps"`
	// IPv6 selects IPv6/UDP test frames (RFC 5180).
	IPv6 bool `json:"ipv6,omitempty" yaml:"ipv6,omitempty"`
	// Bidirectional sends the same rate from both ports (RFC 2544 §14).
	Bidirectional bool `json:"bidirectional,omitempty" yaml:"bidirectional,omitempty"`
	// Flows per stream (UDP port pairs); 0 or 1 is a single flow.
	Flows int `json:"flows,omitempty" yaml:"flows,omitempty"`

	Trial      TrialConfig      `json:"trial" yaml:"trial"`
	Throughput ThroughputConfig `json:"throughput" yaml:"throughput"`
	Latency    LatencyConfig    `json:"latency" yaml:"latency"`
	FrameLoss  FrameLossConfig  `json:"frame_loss" yaml:"frame_loss"`
	BackToBack BackToBackConfig `json:"back_to_back" yaml:"back_to_back"`
	Recovery   RecoveryConfig   `json:"system_recovery" yaml:"system_recovery"`
}

// TrialConfig is the shape of every trial (RFC 2544 §23).
type TrialConfig struct {
	// Duration of a throughput or frame-loss trial. RFC 2544: 60s.
	Duration Duration `json:"duration" yaml:"duration"`
	// Learning is the wait after learning frames. RFC 2544: 2s.
	Learning Duration `json:"learning" yaml:"learning"`
	// Settle is the wait for late frames after traffic stops. RFC 2544: 2s.
	Settle Duration `json:"settle" yaml:"settle"`
	// Rest is the idle time between trials so the DUT settles. RFC 2544: 5s
	// is recommended; 0 means none.
	Rest Duration `json:"rest" yaml:"rest"`
}

// Search is a throughput search mode.
type Search string

// Search modes commercial testers offer.
const (
	SearchBinary Search = "binary"
	SearchStep   Search = "step"
	SearchCombo  Search = "combo"
)

// ThroughputConfig parameterizes the throughput search (RFC 2544 §26.1).
// Loads are percent of line rate.
type ThroughputConfig struct {
	// Search mode: binary (default), step or combo.
	Search Search `json:"search" yaml:"search"`
	// InitialPercent is the first load tried (binary). Default 100.
	InitialPercent float64 `json:"initial_percent" yaml:"initial_percent"`
	// MinPercent and MaxPercent bound the search. Defaults 0.1 and 100.
	MinPercent float64 `json:"min_percent" yaml:"min_percent"`
	MaxPercent float64 `json:"max_percent" yaml:"max_percent"`
	// ResolutionPercent ends a binary search when the highest pass and the
	// lowest fail are this close (percentage points). Default 0.5.
	ResolutionPercent float64 `json:"resolution_percent" yaml:"resolution_percent"`
	// LossTolerancePercent is the acceptable frame loss; 0 (the default) is
	// RFC 2544's zero loss.
	LossTolerancePercent float64 `json:"loss_tolerance_percent" yaml:"loss_tolerance_percent"`
	// StepPercent is the load step of step and combo searches, and
	// StartPercent their first load. Defaults 10 and StepPercent.
	StepPercent  float64 `json:"step_percent" yaml:"step_percent"`
	StartPercent float64 `json:"start_percent" yaml:"start_percent"`
	// MaxTrials caps the trials of one search. Default 30.
	MaxTrials int `json:"max_trials" yaml:"max_trials"`
}

// LatencyConfig parameterizes RFC 2544 §26.2.
type LatencyConfig struct {
	// Duration of each latency stream; the tagged frame is sent half way.
	// RFC 2544: 120s.
	Duration Duration `json:"duration" yaml:"duration"`
	// Repetitions averaged. RFC 2544: 20.
	Repetitions int `json:"repetitions" yaml:"repetitions"`
}

// FrameLossConfig parameterizes RFC 2544 §26.3.
type FrameLossConfig struct {
	// StepPercent is the load decrement from 100%. RFC 2544: 10.
	StepPercent float64 `json:"step_percent" yaml:"step_percent"`
	// FullSweep runs every step down to the last instead of stopping after
	// two successive zero-loss trials.
	FullSweep bool `json:"full_sweep,omitempty" yaml:"full_sweep,omitempty"`
}

// BackToBackConfig parameterizes RFC 2544 §26.4 and RFC 9004.
type BackToBackConfig struct {
	// BurstCap is the longest burst send time tried. RFC 9004: 2s default,
	// up to 30s.
	BurstCap Duration `json:"burst_cap" yaml:"burst_cap"`
	// Repetitions of the search. RFC 2544: 50.
	Repetitions int `json:"repetitions" yaml:"repetitions"`
	// MinStepFrames is the search's resolution in frames. Default: 0.1% of
	// the cap, at least 1.
	MinStepFrames int64 `json:"min_step_frames" yaml:"min_step_frames"`
}

// RecoveryConfig parameterizes RFC 2544 §26.5.
type RecoveryConfig struct {
	// Overload is how long the overload runs before the rate drops to half.
	// RFC 2544: at least 60s.
	Overload Duration `json:"overload" yaml:"overload"`
	// Recovery is how long the reduced rate runs after the change.
	Recovery Duration `json:"recovery" yaml:"recovery"`
}
