package rfc2544

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Goal is one search goal of MLRsearch (RFC 9971 §4.3). One mlr search
// serves every goal of the plan at once: each trial counts for each goal.
// Zero fields mean the defaults WithDefaults fills in (see DefaultGoals);
// a zero LossPercent and ExceedRatio are values, not defaults.
type Goal struct {
	// Name labels the goal in reports, e.g. "NDR", "PDR", "RFC2544".
	Name string `json:"name" yaml:"name"`
	// LossPercent is the Goal Loss Ratio in percent: a trial losing more is
	// high-loss for this goal. 0 is a no-drop rate (NDR).
	LossPercent float64 `json:"loss_percent" yaml:"loss_percent"`
	// ExceedRatio is the Goal Exceed Ratio: the share of trial-seconds
	// that may be high-loss while the load still counts as a lower bound.
	// RFC 9971 recommends 0.5; 0 is RFC 2544 compatibility (every trial
	// must pass).
	ExceedRatio float64 `json:"exceed_ratio" yaml:"exceed_ratio"`
	// WidthPercent is the Goal Width relative to the load: the search of
	// this goal ends when (upper − lower)/upper is at most this. Zero: 0.5.
	WidthPercent float64 `json:"width_percent" yaml:"width_percent"`
	// InitialDuration is the trial duration of the first, coarsest phase.
	// Zero: the profile's (quick 0.25s, rfc2544 1s), at most FinalDuration.
	InitialDuration Duration `json:"initial_duration,omitempty" yaml:"initial_duration,omitempty"`
	// FinalDuration is the Goal Final Trial Duration: only trials this
	// long decide the result. Zero: trial.duration (so --duration moves
	// it).
	FinalDuration Duration `json:"final_duration,omitempty" yaml:"final_duration,omitempty"`
	// DurationSum is the Goal Duration Sum: full-length trial-seconds after
	// which a load is surely classified. Zero: FinalDuration (one
	// full-length trial decides a consistent load).
	DurationSum Duration `json:"duration_sum,omitempty" yaml:"duration_sum,omitempty"`
}

// Default goal parameters.
const (
	// DefaultGoalWidthPercent is the goal width of the default goals.
	DefaultGoalWidthPercent = 0.5
	// DefaultPDRLossPercent is the loss of the partial drop rate goal.
	DefaultPDRLossPercent = 0.5
)

// DefaultGoals returns a profile's goals, their durations left zero (they
// follow trial.duration through WithDefaults):
//   - quick: NDR (0 % loss) and PDR (0.5 % loss), exceed ratio 0.5, as
//     RFC 9971 recommends;
//   - rfc2544: the RFC 2544 compatibility goal (0 % loss, exceed ratio 0,
//     final trials and duration sum of trial.duration: 60 s), reported as
//     the throughput, and PDR (0.5 % loss) with the same durations.
func DefaultGoals(profile string) []Goal {
	if profile == ProfileQuick {
		return []Goal{
			{Name: "NDR", LossPercent: 0, ExceedRatio: 0.5, WidthPercent: DefaultGoalWidthPercent},
			{Name: "PDR", LossPercent: DefaultPDRLossPercent, ExceedRatio: 0.5, WidthPercent: DefaultGoalWidthPercent},
		}
	}
	return []Goal{
		{Name: "RFC2544", LossPercent: 0, ExceedRatio: 0, WidthPercent: DefaultGoalWidthPercent},
		{Name: "PDR", LossPercent: DefaultPDRLossPercent, ExceedRatio: 0, WidthPercent: DefaultGoalWidthPercent},
	}
}

// initialDuration is a profile's default Goal.InitialDuration.
func initialDuration(profile string) Duration {
	if profile == ProfileQuick {
		return Duration(500 * time.Millisecond)
	}
	return Duration(time.Second)
}

// QuickMinFinalDuration is the final trial duration of the quick profile's
// goals when they leave FinalDuration zero and trial.duration is the
// profile's own (1 s; any other trial.duration is used as it is). A DUT's
// buffer hides an overload until it fills: a tbf shaper's 10 ms token
// bucket (the lab's default, and a small one) passes a load 1 % above its
// rate for a whole second with no loss and no queue, so 1 s final trials
// report up to +1 %; 2 s ones halve that (+0.5 %, the goal width). The
// profile's other trials (frame loss) stay 1 s.
const QuickMinFinalDuration = Duration(2 * time.Second)

// quickTrialDuration is the quick profile's trial.duration.
const quickTrialDuration = Duration(time.Second)

// Goals returns the plan's goals with their zero fields resolved: the
// durations against trial.duration and the profile, the width and name.
func (p Plan) Goals() []Goal {
	return goalsWithDefaults(p.Throughput.Goals, p.Profile, p.Trial.Duration)
}

// goalNames fills the names and widths of goals, what WithDefaults sets.
func goalNames(goals []Goal) []Goal {
	out := slices.Clone(goals)
	for i := range out {
		if out[i].WidthPercent == 0 {
			out[i].WidthPercent = DefaultGoalWidthPercent
		}
		if out[i].Name == "" {
			out[i].Name = goalName(out[i].LossPercent)
		}
	}
	return out
}

// goalsWithDefaults fills the zero fields of goals.
func goalsWithDefaults(goals []Goal, profile string, trial Duration) []Goal {
	out := make([]Goal, len(goals))
	for i, g := range goals {
		if g.WidthPercent == 0 {
			g.WidthPercent = DefaultGoalWidthPercent
		}
		if g.FinalDuration == 0 {
			g.FinalDuration = trial
			if profile == ProfileQuick && trial == quickTrialDuration {
				g.FinalDuration = QuickMinFinalDuration
			}
		}
		if g.InitialDuration == 0 {
			g.InitialDuration = min(initialDuration(profile), g.FinalDuration)
		}
		if g.DurationSum == 0 {
			g.DurationSum = g.FinalDuration
		}
		if g.Name == "" {
			g.Name = goalName(g.LossPercent)
		}
		out[i] = g
	}
	return out
}

// goalName is the default name of a goal of loss percent l.
func goalName(l float64) string {
	if l == 0 {
		return "NDR"
	}
	return "PDR" + strconv.FormatFloat(l, 'g', -1, 64)
}

// validateGoals checks the goals of an mlr search, naming the field.
func validateGoals(goals []Goal) error {
	if len(goals) == 0 {
		return fmt.Errorf("plan throughput.goals: [] is not valid: an mlr search needs at least one goal, e.g. {name: NDR, loss_percent: 0}")
	}
	seen := map[string]bool{}
	for i, g := range goals {
		f := fmt.Sprintf("throughput.goals[%d]", i)
		bad := func(field string, v any, fix string) error {
			return fmt.Errorf("plan %s.%s: %v is not valid: %s", f, field, v, fix)
		}
		if seen[g.Name] {
			return bad("name", fmt.Sprintf("%q", g.Name), "each goal needs its own name")
		}
		seen[g.Name] = true
		if !(g.LossPercent >= 0 && g.LossPercent < 100) {
			return bad("loss_percent", g.LossPercent, "use 0 for a no-drop rate, or an acceptable loss below 100, e.g. 0.5")
		}
		if !(g.ExceedRatio >= 0 && g.ExceedRatio < 1) {
			return bad("exceed_ratio", g.ExceedRatio, "use 0 (every trial must pass, RFC 2544) up to below 1; RFC 9971 recommends 0.5")
		}
		if !(g.WidthPercent >= 0.001 && g.WidthPercent <= 50) {
			return bad("width_percent", g.WidthPercent, "use a relative width of 0.001 to 50 percent of the load, e.g. 0.5")
		}
		if g.FinalDuration <= 0 {
			return bad("final_duration", g.FinalDuration, "must be positive, e.g. 60s")
		}
		if g.InitialDuration <= 0 || g.InitialDuration > g.FinalDuration {
			return bad("initial_duration", g.InitialDuration, fmt.Sprintf("must be positive and at most final_duration (%v), e.g. 1s", g.FinalDuration))
		}
		if g.DurationSum < g.FinalDuration {
			return bad("duration_sum", g.DurationSum, fmt.Sprintf("must be at least final_duration (%v)", g.FinalDuration))
		}
	}
	return nil
}

// ParseGoals reads a goal list of the form "NAME=LOSS%" separated by
// commas, e.g. "NDR=0,PDR=0.5%" (the % is optional; a bare loss names
// itself, "0,0.5"). Fields it does not set keep their defaults; base gives
// the exceed ratio of the profile (its first goal's).
func ParseGoals(s string, base []Goal) ([]Goal, error) {
	exceed := 0.0
	if len(base) > 0 {
		exceed = base[0].ExceedRatio
	}
	var out []Goal
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, loss, ok := strings.Cut(f, "=")
		if !ok {
			name, loss = "", f
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(loss), "%"), 64)
		if err != nil || math.IsNaN(v) {
			return nil, fmt.Errorf("goal %q: %q is not a loss in percent; write goals like NDR=0,PDR=0.5%%", f, loss)
		}
		g := Goal{Name: strings.TrimSpace(name), LossPercent: v, ExceedRatio: exceed}
		if g.Name == "" {
			g.Name = goalName(v)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no goal in %q; write goals like NDR=0,PDR=0.5%%", s)
	}
	return out, validateGoals(goalsWithDefaults(out, "", Duration(time.Second)))
}

// NDR is the first goal of zero loss, PDR the first goal with loss; either
// may be nil.
func NDRPDR(goals []GoalResult) (ndr, pdr *GoalResult) {
	for i := range goals {
		g := &goals[i]
		if g.Goal.LossPercent == 0 && ndr == nil {
			ndr = g
		}
		if g.Goal.LossPercent > 0 && pdr == nil {
			pdr = g
		}
	}
	return ndr, pdr
}

// GoalResult is what an mlr search found for one goal (RFC 9971 §4.6).
// Loads are per stream in percent of line rate; rates are all streams.
type GoalResult struct {
	Goal Goal `json:"goal"`
	// Found is set when a relevant lower bound exists; the rates below are
	// then set.
	Found bool `json:"found"`
	// Regular is set when both relevant bounds exist and lie within the
	// goal width (a Regular Goal Result); an irregular result's values
	// are still reported (e.g. the maximum load is a lower bound: no upper
	// bound exists), marked so.
	Regular bool `json:"regular"`
	// LowerPercent is the relevant lower bound: the largest load classified
	// a lower bound below the relevant upper bound; LowerFPS the same load
	// in frames per second.
	LowerPercent float64 `json:"relevant_lower_bound_percent"`
	LowerFPS     float64 `json:"relevant_lower_bound_fps"`
	// UpperPercent is the relevant upper bound: the smallest load
	// classified an upper bound; zero when none (HasUpper false).
	UpperPercent float64 `json:"relevant_upper_bound_percent,omitempty"`
	UpperFPS     float64 `json:"relevant_upper_bound_fps,omitempty"`
	HasUpper     bool    `json:"has_upper_bound"`
	// ConditionalFPS is the conditional throughput: the forwarding rate of
	// the trials at the relevant lower bound at the goal's exceed-ratio
	// quantile of loss (RFC 9971 Appendix B). L1Bps and L2Bps are the
	// same rate in bits per second.
	ConditionalFPS float64 `json:"conditional_throughput_fps"`
	L1Bps          float64 `json:"l1_bps"`
	L2Bps          float64 `json:"l2_bps"`
	// TesterLimited: no upper bound was found because the tester could not
	// carry more; the result is "≥ ConditionalFPS (tester-limited above)".
	TesterLimited bool `json:"tester_limited,omitempty"`
	// Note explains an irregular result.
	Note string `json:"note,omitempty"`
}
