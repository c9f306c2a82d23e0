package rfc2544

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	quotepkg "github.com/rfc2544/rfc2544/internal/quote"

	"github.com/rfc2544/rfc2544/framing"
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
		if _, nerr := strconv.ParseFloat(string(b), 64); nerr == nil {
			return fmt.Errorf("%s has no unit: write it like %ss or %sms", quote(string(b)), b, b)
		}
		return fmt.Errorf("%s is not a duration: write it like 60s, 500ms or 2m", quote(string(b)))
	}
	*d = Duration(v)
	return nil
}

// quote quotes a bad value for an error, cut short (internal/quote).
func quote(s string) string { return quotepkg.Short(s) }

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
	// Mixes are the plan's own frame-size mixes, listed in FrameSizes by
	// name (see RegisterMixes); a mix written in place among the sizes
	// ("mix:64x7,570x4,1518x1") is added here too, so the plan (and the
	// results that embed it) define every mix they use. Default: none.
	Mixes []framing.Mix `json:"mixes,omitempty" yaml:"mixes,omitempty"`
	// LinkBps is the line rate that percentages refer to, in bits per second
	// per port (e.g. 1e9). Required: a veth has no line rate of its own.
	LinkBps float64 `json:"link_bps" yaml:"link_bps"`
	// IPv6 selects IPv6/UDP test frames (RFC 5180).
	IPv6 bool `json:"ipv6,omitempty" yaml:"ipv6,omitempty"`
	// Bidirectional sends the same rate from both ports (RFC 2544 §14).
	Bidirectional bool `json:"bidirectional,omitempty" yaml:"bidirectional,omitempty"`
	// Flows per stream (UDP port pairs); 0 or 1 is a single flow.
	Flows int `json:"flows,omitempty" yaml:"flows,omitempty"`
	// NoProbe turns off the path probe. By default, before the first trial
	// of each frame size, the runner sends a short low-rate burst (ProbeFrames
	// frames at 1% of line rate, at least ProbeMinFPS): when not a single
	// frame of a stream comes through, the size cannot cross the path (an
	// MTU below the frame size) and every test at that size reports zero
	// throughput with the reason (RFC 2544 §9.4) instead of a failed search.
	NoProbe bool `json:"no_probe,omitempty" yaml:"no_probe"`

	Trial      TrialConfig      `json:"trial" yaml:"trial"`
	Throughput ThroughputConfig `json:"throughput" yaml:"throughput"`
	Latency    LatencyConfig    `json:"latency" yaml:"latency"`
	FrameLoss  FrameLossConfig  `json:"frame_loss" yaml:"frame_loss"`
	BackToBack BackToBackConfig `json:"back_to_back" yaml:"back_to_back"`
	Recovery   RecoveryConfig   `json:"system_recovery" yaml:"system_recovery"`

	// LabSweep runs the plan once per lab setting on a temporary lab and
	// compares the runs (the command's --fw-rules-sweep). The runner
	// ignores it: the command reads it from the plan file and gives each
	// run one setting, so no run's results (JSON) hold it.
	LabSweep LabSweep `json:"-" yaml:"lab_sweep,omitempty"`

	// TCP is the RFC 6349 test's settings for 'rfc2544 tcp --plan' (the
	// runner ignores it, like LabSweep).
	TCP TCPSection `json:"-" yaml:"tcp,omitempty"`
}

// TCPSection is a plan's tcp: the settings of 'rfc2544 tcp', each field
// the flag of the same name (which overrides it). The zero value of a
// field is the flag's default.
type TCPSection struct {
	// Bottleneck is the path's bottleneck bandwidth, a bit rate such as
	// 100mbit, or search to measure it (--bb).
	Bottleneck string `json:"bottleneck,omitempty" yaml:"bottleneck,omitempty"`
	// LineRate is the bottleneck search's line rate, e.g. 10G
	// (--line-rate).
	LineRate string `json:"line_rate,omitempty" yaml:"line_rate,omitempty"`
	// Window is each connection's TCP window in bytes, e.g. 256k
	// (--window).
	Window string `json:"window,omitempty" yaml:"window,omitempty"`
	// Streams is the number of connections (--streams).
	Streams int `json:"streams,omitempty" yaml:"streams,omitempty"`
	// Duration is the transfer's length (--duration).
	Duration Duration `json:"duration,omitempty" yaml:"duration,omitempty"`
	// Direction is a-to-b (the default), b-to-a (--reverse) or both
	// (--both).
	Direction string `json:"direction,omitempty" yaml:"direction,omitempty"`
}

// LabSweep is a plan's lab_sweep, e.g. lab_sweep: {fw_rules: [0, 100, 1000,
// 10000]}. The zero value sweeps nothing.
type LabSweep struct {
	// FWRules are the DUT's firewall rule counts (--fw-rules), one run
	// each: at least two, each once.
	FWRules []int `yaml:"fw_rules,omitempty"`
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
	// is recommended (the rfc2544 profile); the quick profile has none. Zero
	// means the profile's value, like every other field.
	Rest Duration `json:"rest" yaml:"rest"`
	// Retries is how many times a trial is run again when the tester's own
	// host stalled its generator (a transient tester limit, never DUT
	// loss). Zero means the profile's value (2); -1 means never. A plan
	// file and --retries write never as 0 (or -1): the CLI stores it as -1.
	Retries int `json:"retries,omitempty" yaml:"retries"`
}

// Search is a throughput search mode.
type Search string

// Search modes commercial testers offer.
const (
	SearchBinary Search = "binary"
	SearchStep   Search = "step"
	SearchCombo  Search = "combo"
	// SearchMLR is RFC 9971 MLRsearch: several goals (NDR, PDR, RFC 2544
	// compatibility) in one search, short trials first, widths relative to
	// the load. The default of both profiles.
	SearchMLR Search = "mlr"
)

// ThroughputConfig parameterizes the throughput search (RFC 2544 §26.1).
// Loads are percent of line rate.
type ThroughputConfig struct {
	// Search mode: mlr (default), binary, step or combo.
	Search Search `json:"search" yaml:"search"`
	// Goals are the mlr search's goals (RFC 9971), in order; the first is
	// the throughput FPS/Found report. Default: the profile's (see
	// DefaultGoals). Binary, step and combo ignore them.
	Goals []Goal `json:"goals,omitempty" yaml:"goals,omitempty"`
	// InitialPercent is the first load tried (binary). Default 100.
	InitialPercent float64 `json:"initial_percent" yaml:"initial_percent"`
	// MinPercent and MaxPercent bound the search. Defaults 0.1 and 100.
	MinPercent float64 `json:"min_percent" yaml:"min_percent"`
	MaxPercent float64 `json:"max_percent" yaml:"max_percent"`
	// ResolutionPercent ends a binary search when the highest pass and the
	// lowest fail are this close (percentage points of line rate). Zero:
	// ResolutionRelativePercent is used instead.
	ResolutionPercent float64 `json:"resolution_percent" yaml:"resolution_percent"`
	// ResolutionRelativePercent ends a binary search when the highest pass
	// and the lowest fail are this close in percent of the highest pass
	// (the current lower bound), so a slow DUT is resolved as finely as a
	// fast one. Used when ResolutionPercent is zero; default 0.5.
	ResolutionRelativePercent float64 `json:"resolution_relative_percent,omitempty" yaml:"resolution_relative_percent,omitempty"`
	// LossTolerancePercent is the acceptable frame loss; 0 (the default) is
	// RFC 2544's zero loss.
	LossTolerancePercent float64 `json:"loss_tolerance_percent" yaml:"loss_tolerance_percent"`
	// StepPercent is the load step of step and combo searches, and
	// StartPercent their first load. Defaults 10 and StepPercent.
	StepPercent  float64 `json:"step_percent" yaml:"step_percent"`
	StartPercent float64 `json:"start_percent" yaml:"start_percent"`
	// MaxTrials caps the trials of one search. Default 30.
	MaxTrials int `json:"max_trials" yaml:"max_trials"`
	// PerDirection, with a bidirectional plan, also searches each
	// direction alone after the bidirectional search (which an asymmetric
	// DUT's slower direction decides), and reports each direction's own
	// throughput in ThroughputResult.Directions[i].Alone.
	PerDirection bool `json:"per_direction,omitempty" yaml:"per_direction,omitempty"`
	// AllowBuffering lets a zero-loss trial whose queue grew through the
	// trial (not sustained: trials.Result.Sustained) pass. By default such a
	// trial fails for every goal of every search mode: the DUT's buffer,
	// not its forwarding, carried the load.
	AllowBuffering bool `json:"allow_buffering,omitempty" yaml:"allow_buffering,omitempty"`
	// MaxLatency, when positive, is a further pass criterion (latency-
	// bounded throughput): a trial whose latency at LatencyPercentile
	// exceeds it fails for every goal.
	MaxLatency Duration `json:"max_latency,omitempty" yaml:"max_latency,omitempty"`
	// LatencyPercentile is the percentile MaxLatency bounds: 50, 90, 99,
	// 99.9 or 100 (the maximum). Zero: 100.
	LatencyPercentile float64 `json:"latency_percentile,omitempty" yaml:"latency_percentile,omitempty"`
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
	// MinStepPercent, used when MinStepFrames is zero, sets the resolution
	// as a percentage of the cap (in frames), at least 1 frame. Defaults:
	// 0.1 (rfc2544), 1 (quick).
	MinStepPercent float64 `json:"min_step_percent" yaml:"min_step_percent"`
}

// RecoveryConfig parameterizes RFC 2544 §26.5.
type RecoveryConfig struct {
	// Overload is how long the overload runs before the rate drops to half.
	// RFC 2544: at least 60s.
	Overload Duration `json:"overload" yaml:"overload"`
	// Recovery is how long the reduced rate runs after the change.
	Recovery Duration `json:"recovery" yaml:"recovery"`
}

// Profiles DefaultPlan knows.
const (
	// ProfileRFC2544 is RFC 2544's own durations: 60 s trials, 2 s learning
	// and settle waits, 5 s rest, latency 120 s × 20, back-to-back 2 s cap ×
	// 50 repetitions. Its throughput search is mlr with the RFC 2544
	// compatibility goal (0 % loss, exceed ratio 0, 60 s final trials, 60 s
	// duration sum) as the throughput and a PDR (0.5 % loss) beside it. A
	// full run over 7 frame sizes takes hours (Plan.SearchEstimate and the
	// CLI's dry run say how long).
	ProfileRFC2544 = "rfc2544"
	// ProfileQuick is for demonstrations and labs: 1 s trials, no learning
	// wait (the engine resolves addresses once), 0.2 s settle, no rest,
	// throughput by mlr with NDR and PDR goals (exceed ratio 0.5, width
	// 0.5 %, trials from 0.5 s to 2 s: QuickMinFinalDuration), latency 2 s × 2, frame loss in 20% steps,
	// back-to-back 0.1 s cap × 3 repetitions at a 1% step, system recovery
	// 2 s + 2 s. Its results are not RFC 2544 benchmarks (trials are too
	// short) but show the shape of one in minutes: the four default tests
	// over the 7 default sizes take some minutes of trial time
	// (TestQuickProfileTime measures 3 to 3.5 minutes on SimDUTs of 10% to
	// 95% capacity; a line-rate DUT takes less).
	ProfileQuick = "quick"
)

// DefaultTests are the tests a plan runs when it names none.
var DefaultTests = []Test{TestThroughput, TestLatency, TestFrameLoss, TestBackToBack}

// DefaultFrameSizes are RFC 2544 §9.1's Ethernet sizes.
var DefaultFrameSizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// Limits a plan is checked against.
const (
	// MinFrameSize and MaxFrameSize bound Plan.FrameSizes, in bytes with
	// FCS: the smallest IPv4/UDP test frame and the largest jumbo frame the
	// engine builds (IPv6 needs framing.MinFrameSize(IPv6UDP) = 84).
	MinFrameSize = 64
	MaxFrameSize = framing.MaxJumbo
	// MaxRepetitions bounds latency.repetitions, back_to_back.repetitions
	// and throughput.max_trials; MaxFlows bounds flows.
	MaxRepetitions = 1000
	MaxFlows       = 65535
	// DefaultRetries is trial.retries of both profiles, and MaxRetries its
	// largest value.
	DefaultRetries = 2
	MaxRetries     = 10
	// MaxBurstCap is RFC 9004's longest burst send time.
	MaxBurstCap = 30 * time.Second
)

// DefaultPlan returns the preset named profile ("rfc2544" or "quick"; ""
// is "rfc2544") with every field set except LinkBps, which the user must give.
func DefaultPlan(profile string) (Plan, error) {
	s := time.Second
	p := Plan{
		Profile:    ProfileRFC2544,
		Tests:      append([]Test(nil), DefaultTests...),
		FrameSizes: append([]int(nil), DefaultFrameSizes...),
		Trial: TrialConfig{
			Duration: Duration(60 * s),
			Learning: Duration(2 * s),
			Settle:   Duration(2 * s),
			Rest:     Duration(5 * s),
			Retries:  DefaultRetries,
		},
		Throughput: ThroughputConfig{
			Search:                    SearchMLR,
			Goals:                     DefaultGoals(ProfileRFC2544),
			InitialPercent:            100,
			MinPercent:                0.1,
			MaxPercent:                100,
			ResolutionRelativePercent: 0.5,
			StepPercent:               10,
			StartPercent:              10,
			MaxTrials:                 30,
		},
		Latency:    LatencyConfig{Duration: Duration(120 * s), Repetitions: 20},
		FrameLoss:  FrameLossConfig{StepPercent: 10},
		BackToBack: BackToBackConfig{BurstCap: Duration(2 * s), Repetitions: 50, MinStepPercent: 0.1},
		Recovery:   RecoveryConfig{Overload: Duration(60 * s), Recovery: Duration(30 * s)},
	}
	switch profile {
	case "", ProfileRFC2544:
		return p, nil
	case ProfileQuick:
		ms := time.Millisecond
		p.Profile = ProfileQuick
		p.Trial = TrialConfig{Duration: quickTrialDuration, Learning: 0, Settle: Duration(200 * ms), Rest: 0, Retries: DefaultRetries}
		p.Throughput.Goals = DefaultGoals(ProfileQuick)
		p.Throughput.MaxTrials = 20
		p.Latency = LatencyConfig{Duration: Duration(2 * s), Repetitions: 2}
		p.FrameLoss = FrameLossConfig{StepPercent: 20}
		p.BackToBack = BackToBackConfig{BurstCap: Duration(100 * ms), Repetitions: 3, MinStepPercent: 1}
		p.Recovery = RecoveryConfig{Overload: Duration(2 * s), Recovery: Duration(2 * s)}
		return p, nil
	}
	return Plan{}, fmt.Errorf("profile %s: unknown; use %q or %q", quote(profile), ProfileRFC2544, ProfileQuick)
}

// WithDefaults returns p with every zero field filled from its profile
// (Profile "" is rfc2544). Booleans keep their value: their zero is the
// default. An unknown profile leaves p as it is, for Validate to report.
func (p Plan) WithDefaults() Plan {
	d, err := DefaultPlan(p.Profile)
	if err != nil {
		return p
	}
	p.Profile = d.Profile
	if len(p.Tests) == 0 {
		p.Tests = d.Tests
	}
	if len(p.FrameSizes) == 0 {
		p.FrameSizes = d.FrameSizes
	}
	setD := func(v *Duration, def Duration) {
		if *v == 0 {
			*v = def
		}
	}
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	setI := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setD(&p.Trial.Duration, d.Trial.Duration)
	setD(&p.Trial.Learning, d.Trial.Learning)
	setD(&p.Trial.Settle, d.Trial.Settle)
	setD(&p.Trial.Rest, d.Trial.Rest)
	setI(&p.Trial.Retries, d.Trial.Retries)

	t := &p.Throughput
	if t.Search == "" {
		t.Search = d.Throughput.Search
	}
	setF(&t.InitialPercent, d.Throughput.InitialPercent)
	setF(&t.MinPercent, d.Throughput.MinPercent)
	setF(&t.MaxPercent, d.Throughput.MaxPercent)
	if t.ResolutionPercent == 0 {
		setF(&t.ResolutionRelativePercent, d.Throughput.ResolutionRelativePercent)
	}
	if len(t.Goals) == 0 {
		t.Goals = d.Throughput.Goals
	}
	t.Goals = goalNames(t.Goals)
	setF(&t.StepPercent, d.Throughput.StepPercent)
	setF(&t.StartPercent, t.StepPercent)
	setI(&t.MaxTrials, d.Throughput.MaxTrials)

	setD(&p.Latency.Duration, d.Latency.Duration)
	setI(&p.Latency.Repetitions, d.Latency.Repetitions)
	setF(&p.FrameLoss.StepPercent, d.FrameLoss.StepPercent)
	setD(&p.BackToBack.BurstCap, d.BackToBack.BurstCap)
	setI(&p.BackToBack.Repetitions, d.BackToBack.Repetitions)
	setF(&p.BackToBack.MinStepPercent, d.BackToBack.MinStepPercent)
	setD(&p.Recovery.Overload, d.Recovery.Overload)
	setD(&p.Recovery.Recovery, d.Recovery.Recovery)
	return p.defineMixes()
}

// PlanError is a bad plan field: its YAML name, the value and the fix.
type PlanError struct {
	// Field is the dotted YAML name, e.g. "trial.duration".
	Field string
	Value any
	Fix   string
}

func (e *PlanError) Error() string {
	return fmt.Sprintf("plan %s: %v is not valid: %s", e.Field, e.Value, e.Fix)
}

// Validate reports the first bad parameter of p as a *PlanError. Call it on
// a complete plan (p.WithDefaults(), or a plan decoded over DefaultPlan): a
// zero that WithDefaults would replace by the profile's value is an error
// here, so a value given as zero is refused, never silently replaced. It
// registers the plan's mixes (RegisterMixes), so their codes resolve.
func (p Plan) Validate() error {
	bad := func(field string, v any, fix string) error {
		return &PlanError{Field: field, Value: v, Fix: fix}
	}
	if _, err := DefaultPlan(p.Profile); err != nil {
		return fmt.Errorf("plan profile: %w", err)
	}
	if len(p.Tests) == 0 {
		return bad("tests", "[]", "name at least one of throughput, latency, frame_loss, back_to_back, system_recovery")
	}
	seenT := map[Test]bool{}
	for _, t := range p.Tests {
		if !t.valid() {
			return bad("tests", quote(string(t)), "use throughput, latency, frame_loss, back_to_back or system_recovery")
		}
		if seenT[t] {
			return bad("tests", quote(string(t)), "each test may be named once")
		}
		seenT[t] = true
	}
	if len(p.FrameSizes) == 0 {
		return bad("frame_sizes", "[]", "give at least one size, e.g. [64, 128, 256, 512, 1024, 1280, 1518]")
	}
	if err := p.RegisterMixes(); err != nil {
		return err
	}
	if err := p.checkMixSizes("frame_sizes", p.FrameSizes); err != nil {
		return err
	}
	seenF := map[int]bool{}
	proto := framing.IPv4UDP
	if p.IPv6 {
		proto = framing.IPv6UDP
	}
	for _, f := range p.FrameSizes {
		if framing.IsMix(f) {
			if err := framing.ValidateFrameSize(f, proto, false, 0); err != nil {
				return bad("frame_sizes", framing.SizeName(f), fmt.Sprintf("%v; use a mix whose every size fits %s, or fixed sizes", err, proto))
			}
		} else if min := framing.MinFrameSize(proto, false); f < min || f > MaxFrameSize {
			return bad("frame_sizes", f, fmt.Sprintf("%s frame sizes are %d to %d bytes, FCS included", proto, min, MaxFrameSize))
		}
		if seenF[f] {
			return bad("frame_sizes", f, "each size may be listed once")
		}
		seenF[f] = true
	}
	if !(p.LinkBps > 0) || math.IsInf(p.LinkBps, 0) {
		return bad("link_bps", p.LinkBps, "set the line rate of the tester ports in bit/s, e.g. 1e9 for 1 Gbit/s")
	}
	if p.Flows < 0 || p.Flows > MaxFlows {
		return bad("flows", p.Flows, fmt.Sprintf("use 0 or 1 for a single flow, up to %d to spread over UDP port pairs", MaxFlows))
	}
	if p.Throughput.PerDirection && !p.Bidirectional {
		return bad("throughput.per_direction", true, "searching each direction alone needs a bidirectional plan: set bidirectional: true, or drop per_direction")
	}
	if p.Trial.Duration <= 0 {
		return bad("trial.duration", p.Trial.Duration, "must be positive, e.g. 60s")
	}
	for _, f := range []struct {
		name string
		v    Duration
	}{{"trial.learning", p.Trial.Learning}, {"trial.settle", p.Trial.Settle}, {"trial.rest", p.Trial.Rest}} {
		if f.v < 0 {
			return bad(f.name, f.v, "must not be negative, e.g. 2s")
		}
	}

	if p.Trial.Retries < -1 || p.Trial.Retries > MaxRetries {
		return bad("trial.retries", p.Trial.Retries, fmt.Sprintf("use 0 (never run a trial again) to %d repeats of a trial the tester's host stalled, or leave it out for %d", MaxRetries, DefaultRetries))
	}

	t := p.Throughput
	switch t.Search {
	case SearchBinary, SearchStep, SearchCombo:
	case SearchMLR:
		if err := validateGoals(p.Goals()); err != nil {
			return err
		}
		if t.LossTolerancePercent != 0 {
			return bad("throughput.loss_tolerance_percent", t.LossTolerancePercent, "an mlr search takes its losses from throughput.goals (e.g. --goals NDR=0,PDR=0.5%); drop it, or use search: binary")
		}
	default:
		return bad("throughput.search", quote(string(t.Search)), "use mlr, binary, step or combo")
	}
	if err := t.validateCriteria(); err != nil {
		return err
	}
	pct := func(field string, v float64) error {
		if !(v > 0 && v <= 100) {
			return bad(field, v, "a load is a percentage of line rate above 0 and at most 100")
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"throughput.min_percent", t.MinPercent},
		{"throughput.max_percent", t.MaxPercent},
		{"throughput.initial_percent", t.InitialPercent},
		{"throughput.step_percent", t.StepPercent},
		{"throughput.start_percent", t.StartPercent},
	} {
		if err := pct(f.name, f.v); err != nil {
			return err
		}
	}
	if t.MinPercent > t.MaxPercent {
		return bad("throughput.min_percent", t.MinPercent, fmt.Sprintf("must not exceed max_percent (%g)", t.MaxPercent))
	}
	if t.InitialPercent < t.MinPercent || t.InitialPercent > t.MaxPercent {
		return bad("throughput.initial_percent", t.InitialPercent, fmt.Sprintf("must lie in [min_percent, max_percent] = [%g, %g]", t.MinPercent, t.MaxPercent))
	}
	if t.StartPercent < t.MinPercent || t.StartPercent > t.MaxPercent {
		return bad("throughput.start_percent", t.StartPercent, fmt.Sprintf("must lie in [min_percent, max_percent] = [%g, %g]", t.MinPercent, t.MaxPercent))
	}
	if !(t.LossTolerancePercent >= 0 && t.LossTolerancePercent < 100) {
		return bad("throughput.loss_tolerance_percent", t.LossTolerancePercent, "use 0 for RFC 2544's zero loss, or an acceptable loss below 100, e.g. 0.1")
	}
	if t.MaxTrials < 1 || t.MaxTrials > MaxRepetitions {
		return bad("throughput.max_trials", t.MaxTrials, fmt.Sprintf("use 1 to %d, e.g. 30", MaxRepetitions))
	}

	if p.Latency.Duration <= 0 {
		return bad("latency.duration", p.Latency.Duration, "must be positive, e.g. 120s")
	}
	if p.Latency.Repetitions < 1 || p.Latency.Repetitions > MaxRepetitions {
		return bad("latency.repetitions", p.Latency.Repetitions, fmt.Sprintf("use 1 to %d; RFC 2544 asks for 20", MaxRepetitions))
	}
	if err := pct("frame_loss.step_percent", p.FrameLoss.StepPercent); err != nil {
		return err
	}
	b := p.BackToBack
	if b.BurstCap <= 0 || b.BurstCap.D() > MaxBurstCap {
		return bad("back_to_back.burst_cap", b.BurstCap, "must be positive and at most 30s (RFC 9004); 2s is the default")
	}
	if b.Repetitions < 1 || b.Repetitions > MaxRepetitions {
		return bad("back_to_back.repetitions", b.Repetitions, fmt.Sprintf("use 1 to %d; RFC 2544 asks for 50", MaxRepetitions))
	}
	if b.MinStepFrames < 0 {
		return bad("back_to_back.min_step_frames", b.MinStepFrames, "must be 0 (use min_step_percent) or a positive number of frames")
	}
	if !(b.MinStepPercent > 0 && b.MinStepPercent < 100) {
		return bad("back_to_back.min_step_percent", b.MinStepPercent, "must be above 0 and below 100, e.g. 0.1")
	}
	if p.Recovery.Overload <= 0 {
		return bad("system_recovery.overload", p.Recovery.Overload, "must be positive; RFC 2544 asks for at least 60s")
	}
	if p.Recovery.Recovery <= 0 {
		return bad("system_recovery.recovery", p.Recovery.Recovery, "must be positive, e.g. 30s")
	}
	if err := p.checkFrameTime(); err != nil {
		return err
	}
	// Last, what the checks above allow but WithDefaults would replace:
	// e.g. trial.rest 0s in profile rfc2544.
	if f, v, def := replaced(reflect.ValueOf(p), reflect.ValueOf(p.WithDefaults()), ""); f != "" {
		return bad(f, v, fmt.Sprintf("zero means the profile's value (%v in profile %s); give the value you want, e.g. 1ms, or leave the field out", def, p.Profile))
	}
	return nil
}

// checkFrameTime refuses trials too short to send one frame even at the
// highest load they use, at the largest frame size: every such trial would
// send nothing and be recorded as 100 % loss (--duration 1ns). A trial the
// search sends at a low load may still carry fewer frames than a longer one
// would; that is the plan's choice of duration and min_percent.
func (p Plan) checkFrameTime() error {
	largest := slices.MaxFunc(p.FrameSizes, func(a, b int) int { return cmp.Compare(framing.MeanFrameSize(a), framing.MeanFrameSize(b)) })
	has := func(t Test) bool { return slices.Contains(p.Tests, t) }
	check := func(field string, d Duration, pct float64, what string) error {
		fps := framing.LineRateFPS(p.LinkBps, largest) * pct / 100
		if fps <= 0 {
			return nil
		}
		frame := time.Duration(float64(time.Second) / fps)
		if d.D() < frame {
			return &PlanError{Field: field, Value: d, Fix: fmt.Sprintf(
				"shorter than one frame time even at %s (%g%% of the %g Mbit/s line rate at %s bytes: one frame every %v), so no trial would send a frame; give at least %v",
				what, pct, p.LinkBps/1e6, framing.SizeName(largest), frame, frame.Truncate(time.Microsecond)+time.Microsecond)}
		}
		return nil
	}
	t := p.Throughput
	if has(TestThroughput) || has(TestLatency) || has(TestBackToBack) || has(TestRecovery) {
		// Every test but frame loss starts from a throughput search.
		if err := check("trial.duration", p.Trial.Duration, t.MaxPercent, "the highest load of the throughput search"); err != nil {
			return err
		}
	}
	if has(TestFrameLoss) {
		if err := check("trial.duration", p.Trial.Duration, 100, "the first load of the frame loss test"); err != nil {
			return err
		}
	}
	if has(TestLatency) {
		if err := check("latency.duration", p.Latency.Duration, t.MaxPercent, "the highest throughput a latency test may run at"); err != nil {
			return err
		}
	}
	if has(TestBackToBack) {
		if err := check("back_to_back.burst_cap", p.BackToBack.BurstCap, 100, "the line rate of a back-to-back burst"); err != nil {
			return err
		}
	}
	return nil
}

// replaced finds the first field (by YAML path) where p and d differ, p
// being a plan and d its WithDefaults. Profile is not compared: "" is a
// name for rfc2544.
func replaced(p, d reflect.Value, path string) (field string, v, def any) {
	for i := 0; i < p.NumField(); i++ {
		sf := p.Type().Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		// A goal's zero width or durations are documented defaults of
		// their own (the goal's profile values, trial.duration).
		if !sf.IsExported() || name == "-" || sf.Name == "Profile" || sf.Name == "Goals" {
			continue
		}
		if path != "" {
			name = path + "." + name
		}
		pv, dv := p.Field(i), d.Field(i)
		if pv.Kind() == reflect.Struct {
			if f, v, def := replaced(pv, dv, name); f != "" {
				return f, v, def
			}
			continue
		}
		if !reflect.DeepEqual(pv.Interface(), dv.Interface()) {
			return name, pv.Interface(), dv.Interface()
		}
	}
	return "", nil, nil
}

// Streams is how many streams each trial sends: 2 when Bidirectional, else 1.
func (p Plan) Streams() int {
	if p.Bidirectional {
		return 2
	}
	return 1
}

func (t Test) valid() bool {
	switch t {
	case TestThroughput, TestLatency, TestFrameLoss, TestBackToBack, TestRecovery:
		return true
	}
	return false
}

// needsThroughput reports whether t runs at the measured throughput.
func (t Test) needsThroughput() bool {
	return t == TestLatency || t == TestBackToBack || t == TestRecovery
}
