package rfc2544

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/internal/rate"
)

// PlanFlags are a plan's settings as command-line flags, the way the rfc2544
// command's run verbs take them: AddPlanFlags registers them on a flag set,
// Apply sets the ones given over a plan, and Error says which flag set a
// field Plan.Validate refused. A flag only sets its field; the ranges are
// the plan's (Plan.Validate), so a flag and a plan file are checked alike.
type PlanFlags struct {
	fs *flag.FlagSet

	tests, sizes, search, lineRate, goals             string
	jumbo, bidir, ipv6, noProbe, allowBuffering       bool
	duration, settle, learning, rest, latencyDuration Duration
	b2bCap, maxLatency                                Duration
	resolution, lossTolerance, lossStep               percentFlag
	latencyReps, b2bReps, maxTrials, flows, retries   int
	latencyPercentile                                 float64
}

// JumboSizes are what --jumbo adds: the RFC 5180 sizes a 9000-byte MTU path
// carries (9216 needs MTU 9198; ask for it with --sizes).
var JumboSizes = []int{2048, 4096, 8192, 9018}

// AddPlanFlags registers the plan's flags on fs; --tests only when
// withTests (a one-test verb fixes the tests).
func AddPlanFlags(fs *flag.FlagSet, withTests bool) *PlanFlags {
	f := &PlanFlags{fs: fs}
	if withTests {
		fs.StringVar(&f.tests, "tests", "all", "`list` of tests to run, comma-separated: throughput, latency, loss, b2b, recovery or all")
	}
	fs.StringVar(&f.sizes, "sizes", "", "frame `sizes` in bytes with FCS, comma-separated (default 64,128,256,512,1024,1280,1518); mixes: imix, imix-csit, a plan's mixes by name, or mix:64x7,570x4,1518x1 (SIZExWEIGHT)")
	fs.BoolVar(&f.jumbo, "jumbo", false, "add the jumbo sizes 2048,4096,8192,9018 (sizes the path cannot carry report zero throughput)")
	fs.TextVar(&f.duration, "duration", Duration(0), "trial `duration` of throughput and frame loss trials, e.g. 60s")
	fs.StringVar(&f.search, "search", "", "throughput search `mode`: mlr (RFC 9971: NDR and PDR in one search, the default), binary, step or combo")
	fs.Var(&f.resolution, "resolution", "binary search resolution in `percent` points of line rate, e.g. 0.5, or relative to the highest pass with a %, e.g. 0.5% (the default)")
	fs.StringVar(&f.goals, "goals", "", "mlr search goals as `NAME=LOSS%` pairs, comma-separated, e.g. NDR=0,PDR=0.5% (default: the profile's)")
	fs.BoolVar(&f.allowBuffering, "allow-buffering", false, "let a zero-loss trial whose queue grew through the trial (not sustained) pass")
	fs.TextVar(&f.maxLatency, "max-latency", Duration(0), "latency-bounded throughput: a trial whose latency exceeds this `duration` fails, e.g. 30us")
	fs.Float64Var(&f.latencyPercentile, "latency-percentile", 0, "the latency `percentile` --max-latency bounds: 50, 90, 99, 99.9 or 100 (the maximum, default)")
	fs.Var(&f.lossTolerance, "loss-tolerance", "acceptable frame loss in `percent` (0 = RFC 2544 zero loss)")
	fs.Var(&f.lossStep, "loss-step", "frame loss test load step in `percent`, e.g. 10")
	fs.TextVar(&f.settle, "settle", Duration(0), "wait for late frames after each trial (`duration`, RFC 2544: 2s)")
	fs.TextVar(&f.learning, "learning", Duration(0), "wait after learning frames (`duration`, RFC 2544: 2s)")
	fs.TextVar(&f.rest, "rest", Duration(0), "idle time between trials (`duration`)")
	fs.TextVar(&f.latencyDuration, "latency-duration", Duration(0), "latency stream `duration` (RFC 2544: 120s)")
	fs.IntVar(&f.latencyReps, "latency-reps", 0, "latency repetitions (RFC 2544: 20)")
	fs.TextVar(&f.b2bCap, "b2b-cap", Duration(0), "longest back-to-back burst `duration` (RFC 9004: 2s)")
	fs.IntVar(&f.b2bReps, "b2b-reps", 0, "back-to-back repetitions (RFC 2544: 50)")
	fs.IntVar(&f.maxTrials, "max-trials", 0, "cap on the trials of one throughput search")
	fs.IntVar(&f.retries, "retries", 0, "`times` a trial is run again when this host stalled the generator (a transient tester limit, never DUT loss): 0 (or -1) never, at most 10 (default 2); a plan's trial.retries reads the same")
	fs.IntVar(&f.flows, "flows", 0, "UDP flows per stream, so a multi-queue DUT spreads the load")
	fs.BoolVar(&f.bidir, "bidir", false, "send from both ports at once (RFC 2544 §14)")
	fs.BoolVar(&f.ipv6, "ipv6", false, "IPv6/UDP test frames (RFC 5180)")
	fs.BoolVar(&f.noProbe, "no-probe", false, "skip the short low-rate path probe before each frame size")
	fs.StringVar(&f.lineRate, "line-rate", "", "line `rate` percentages refer to, e.g. 10G (default: the interface speed; 1G nominal for a lab/veth and sim)")
	return f
}

// IPv6 reports --ipv6.
func (f *PlanFlags) IPv6() bool { return f.ipv6 }

// Jumbo reports --jumbo.
func (f *PlanFlags) Jumbo() bool { return f.jumbo }

func (f *PlanFlags) set() map[string]bool {
	m := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { m[fl.Name] = true })
	return m
}

// Apply sets the flags given over p, a complete plan (profile, then plan
// file); fixed, when not nil, are the tests instead of --tests. Errors name
// the flag; ranges are left to Plan.Validate (see Error).
func (f *PlanFlags) Apply(p *Plan, fixed []Test) error {
	set := f.set()
	var err error
	if fixed != nil {
		p.Tests = fixed
	} else if set["tests"] {
		if p.Tests, err = ParseTests(f.tests); err != nil {
			return fmt.Errorf("--tests %s: %w", quote(f.tests), err)
		}
	}
	if set["ipv6"] {
		p.IPv6 = f.ipv6
	}
	if set["sizes"] {
		if p.FrameSizes, err = p.parseSizes(f.sizes); err != nil {
			return fmt.Errorf("--sizes %s: %w", quote(f.sizes), err)
		}
		*p = p.defineMixes()
	}
	if f.jumbo {
		for _, j := range JumboSizes {
			if !slices.Contains(p.FrameSizes, j) {
				p.FrameSizes = append(p.FrameSizes, j)
			}
		}
	}
	if set["line-rate"] {
		if p.LinkBps, err = rate.ParseBits(f.lineRate); err != nil {
			return fmt.Errorf("--line-rate %s: %w", quote(f.lineRate), err)
		}
	}
	for name, d := range map[string]struct {
		v   Duration
		dst *Duration
	}{
		"duration":         {f.duration, &p.Trial.Duration},
		"settle":           {f.settle, &p.Trial.Settle},
		"learning":         {f.learning, &p.Trial.Learning},
		"rest":             {f.rest, &p.Trial.Rest},
		"latency-duration": {f.latencyDuration, &p.Latency.Duration},
		"b2b-cap":          {f.b2bCap, &p.BackToBack.BurstCap},
	} {
		if set[name] {
			*d.dst = d.v
		}
	}
	if set["search"] {
		p.Throughput.Search = Search(strings.ToLower(f.search))
	}
	if set["resolution"] {
		if f.resolution.rel {
			p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent = 0, f.resolution.v
		} else {
			p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent = f.resolution.v, 0
		}
	}
	if err := f.applyMLR(set, &p.Throughput); err != nil {
		return err
	}
	if set["loss-tolerance"] {
		p.Throughput.LossTolerancePercent = f.lossTolerance.v
	}
	if set["loss-step"] {
		p.FrameLoss.StepPercent = f.lossStep.v
	}
	for name, n := range map[string]struct {
		v   int
		dst *int
	}{
		"latency-reps": {f.latencyReps, &p.Latency.Repetitions},
		"b2b-reps":     {f.b2bReps, &p.BackToBack.Repetitions},
		"max-trials":   {f.maxTrials, &p.Throughput.MaxTrials},
		"flows":        {f.flows, &p.Flows},
		"retries":      {f.retries, &p.Trial.Retries},
	} {
		if set[name] {
			*n.dst = n.v
		}
	}
	if p.Trial.Retries == 0 {
		// Given as 0 (the profile's is 2), in the plan file or by
		// --retries: never, which the plan writes -1 (its 0 would be the
		// profile's value).
		p.Trial.Retries = -1
	}
	if set["bidir"] {
		p.Bidirectional = f.bidir
	}
	if set["no-probe"] {
		p.NoProbe = f.noProbe
	}
	return nil
}

// applyMLR applies --goals, --allow-buffering, --max-latency and
// --latency-percentile.
func (f *PlanFlags) applyMLR(set map[string]bool, t *ThroughputConfig) error {
	if set["goals"] {
		g, err := ParseGoals(f.goals, t.Goals)
		if err != nil {
			return fmt.Errorf("--goals %q: %v", f.goals, err)
		}
		t.Goals = g
	}
	if set["allow-buffering"] {
		t.AllowBuffering = f.allowBuffering
	}
	if set["max-latency"] {
		if f.maxLatency <= 0 {
			return fmt.Errorf("--max-latency %v: give a positive bound such as 30us, or leave it out", f.maxLatency)
		}
		t.MaxLatency = f.maxLatency
	}
	if set["latency-percentile"] {
		switch f.latencyPercentile {
		case 50, 90, 99, 99.9, 100:
			t.LatencyPercentile = f.latencyPercentile
		default:
			return fmt.Errorf("--latency-percentile %g: use 50, 90, 99, 99.9 or 100 (the maximum)", f.latencyPercentile)
		}
		if !set["max-latency"] && t.MaxLatency == 0 {
			return fmt.Errorf("--latency-percentile %g: it qualifies --max-latency; add e.g. --max-latency 30us", f.latencyPercentile)
		}
	}
	return nil
}

// fieldFlags names the flag that sets each plan field.
var fieldFlags = map[string]string{
	"tests": "tests", "frame_sizes": "sizes", "link_bps": "line-rate", "flows": "flows",
	"trial.duration": "duration", "trial.settle": "settle", "trial.learning": "learning", "trial.rest": "rest",
	"trial.retries": "retries", "throughput.search": "search", "throughput.resolution_percent": "resolution",
	"throughput.resolution_relative_percent": "resolution",
	"throughput.loss_tolerance_percent":      "loss-tolerance", "throughput.max_trials": "max-trials",
	"latency.duration": "latency-duration", "latency.repetitions": "latency-reps", "frame_loss.step_percent": "loss-step",
	"back_to_back.burst_cap": "b2b-cap", "back_to_back.repetitions": "b2b-reps",
}

// Flag names the flag that set the field of a Plan.Validate error, as
// "--name value" (or "--jumbo" for frame sizes it added); "" when no flag
// given set it (the plan file or profile did).
func (f *PlanFlags) Flag(err error) string {
	var pe *PlanError
	if !errors.As(err, &pe) {
		return ""
	}
	if name, ok := fieldFlags[pe.Field]; ok && f.set()[name] {
		return "--" + name + " " + flagValue(f.fs.Lookup(name).Value.String())
	}
	if pe.Field == "frame_sizes" && f.jumbo {
		return "--jumbo"
	}
	return ""
}

// flagValue shows a flag's value as typed when it is short and plain, else
// quoted (and cut).
func flagValue(v string) string {
	if v != "" && len(v) <= 100 && strconv.Quote(v) == `"`+v+`"` && !strings.ContainsAny(v, " ,;") {
		return v
	}
	return quote(v)
}

// percentFlag is a number of percent ("0.5" or "0.5%"); its range is the
// plan field's. rel records the % sign (--resolution: relative to the load).
type percentFlag struct {
	v   float64
	rel bool
}

func (f *percentFlag) String() string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *percentFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("%s is not a number of percent, e.g. 0.5", quote(s))
	}
	f.v = v
	f.rel = strings.HasSuffix(strings.TrimSpace(s), "%")
	return nil
}
