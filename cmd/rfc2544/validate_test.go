package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestPlanAndFlagsValidateAlike: a value given explicitly in a plan file is
// checked, never silently replaced by the profile's; a plan field and its
// flag refuse the same values with the same message (rfc2544.Plan.Validate's),
// the flag's error naming the flag and the plan's naming the file (issue 17
// item 11).
func TestPlanAndFlagsValidateAlike(t *testing.T) {
	dir := t.TempDir()
	sim := []string{"run", "--transport", "sim", "--out", filepath.Join(dir, "out")}
	tests := []struct {
		name  string
		yaml  string
		flags []string // the same value by flag, or nil
		want  string   // in the message after the source
	}{
		{"trial duration zero", "trial:\n  duration: 0s\n", []string{"--duration", "0s"}, "plan trial.duration: 0s is not valid: must be positive"},
		{"trial duration negative", "trial:\n  duration: -1s\n", []string{"--duration", "-1s"}, "plan trial.duration: -1s is not valid"},
		{"rest zero in rfc2544", "trial:\n  rest: 0s\n", []string{"--rest", "0s"}, "plan trial.rest: 0s is not valid: zero means the profile's value (5s"},
		{"latency repetitions zero", "latency:\n  repetitions: 0\n", []string{"--latency-reps", "0"}, "plan latency.repetitions: 0 is not valid: use 1 to 1000"},
		{"max trials above the cap", "throughput:\n  max_trials: 100000000\n", []string{"--max-trials", "100000000"}, "plan throughput.max_trials: 100000000 is not valid: use 1 to 1000"},
		{"resolution negative", "throughput:\n  resolution_percent: -1\n", []string{"--resolution", "-1"}, "plan throughput.resolution_percent: -1 is not valid"},
		{"frame size too large", "frame_sizes: [20000]\n", []string{"--sizes", "20000"}, "plan frame_sizes: 20000 is not valid: IPv4/UDP frame sizes are 64 to 9216 bytes"},
		{"frame size too small", "frame_sizes: [63]\n", []string{"--sizes", "63"}, "plan frame_sizes: 63 is not valid: IPv4/UDP frame sizes are 64 to 9216 bytes"},
		{"frame size twice", "frame_sizes: [64, 64]\n", []string{"--sizes", "64,64"}, "plan frame_sizes: 64 is not valid: each size may be listed once"},
		{"burst cap", "back_to_back:\n  burst_cap: 1m\n", []string{"--b2b-cap", "1m"}, "plan back_to_back.burst_cap: 1m0s is not valid"},
		{"search unknown", "throughput:\n  search: warp\n", []string{"--search", "warp"}, `plan throughput.search: "warp" is not valid: use mlr, binary, step or combo`},
		{"flows too many", "flows: 70000\n", []string{"--flows", "70000"}, "plan flows: 70000 is not valid"},
		{"retries above the cap", "trial:\n  retries: 11\n", []string{"--retries", "11"}, "plan trial.retries: 11 is not valid: use 0 (never run a trial again) to 10"},
		// Trials that cannot send one frame (issue 17 item 10).
		{"duration 1ns", "trial:\n  duration: 1ns\n", []string{"--duration", "1ns"}, "plan trial.duration: 1ns is not valid: shorter than one frame time even at the highest load of the throughput search (100% of the 1000 Mbit/s line rate at 1518 bytes: one frame every 12.304µs)"},
		{"latency duration 1us", "latency:\n  duration: 1us\n", []string{"--latency-duration", "1us"}, "plan latency.duration: 1µs is not valid: shorter than one frame time"},
		{"burst cap 1ns", "back_to_back:\n  burst_cap: 1ns\n", []string{"--b2b-cap", "1ns"}, "plan back_to_back.burst_cap: 1ns is not valid: shorter than one frame time even at the line rate"},
		{"initial percent zero", "throughput:\n  initial_percent: 0\n", nil, "plan throughput.initial_percent: 0 is not valid"},
		{"link bps nan", "link_bps: .nan\n", nil, "plan link_bps: NaN is not valid"},
		{"link bps negative", "link_bps: -1\n", nil, "plan link_bps: -1 is not valid"},
		{"link bps zero", "link_bps: 0\n", nil, "plan link_bps: 0 is not valid"},
		{"frame sizes empty", "frame_sizes: []\n", nil, "plan frame_sizes: [] is not valid"},
		{"tests empty", "tests: []\n", nil, "plan tests: [] is not valid"},
		{"second document", "trial:\n  duration: 1s\n---\ntrial:\n  duration: 2s\n", nil, "a second YAML document at line 3"},
		{"second document invalid", "trial:\n  duration: 1s\n---\n: [\n", nil, "a plan file is one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forbidTraffic(t)
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, perr := runCLI(t, context.Background(), append(sim, "--plan", path)...)
			if perr == nil || exitCode(perr, io.Discard) != exitUsage {
				t.Fatalf("plan %q: got %v, want a usage error", tt.yaml, perr)
			}
			if want := "--plan " + path + ": "; !strings.HasPrefix(perr.Error(), want) || !strings.Contains(perr.Error(), tt.want) {
				t.Errorf("plan %q:\n got %v\nwant %s...%s", tt.yaml, perr, want, tt.want)
			}
			if tt.flags == nil {
				return
			}
			_, _, ferr := runCLI(t, context.Background(), append(sim, tt.flags...)...)
			if ferr == nil || exitCode(ferr, io.Discard) != exitUsage {
				t.Fatalf("%s: got %v, want a usage error", tt.flags, ferr)
			}
			if want := "--" + strings.TrimPrefix(tt.flags[0], "--") + " "; !strings.HasPrefix(ferr.Error(), want) {
				t.Errorf("%s: %v does not start with %q", tt.flags, ferr, want)
			}
			// The same message after the source.
			pm := perr.Error()[strings.Index(perr.Error(), ": plan ")+2:]
			fm := ferr.Error()[strings.Index(ferr.Error(), ": plan ")+2:]
			if pm != fm {
				t.Errorf("plan and flag disagree:\nplan: %s\nflag: %s", pm, fm)
			}
		})
	}
}

// TestRetriesZeroMeansNever: trial.retries 0 in a plan and --retries 0 both
// mean never (stored as -1); -1 still works; a plan without it keeps the
// profile's 2 (issue 17 item 11).
func TestRetriesZeroMeansNever(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	zero := write("zero.yaml", "trial:\n  retries: 0\n")
	minus := write("minus.yaml", "trial:\n  retries: -1\n")
	none := write("none.yaml", "trial:\n  duration: 1s\n")
	for _, tt := range []struct {
		name string
		args []string
		want int
	}{
		{"plan 0", []string{"--plan", zero}, -1},
		{"plan -1", []string{"--plan", minus}, -1},
		{"flag 0", []string{"--retries", "0"}, -1},
		{"flag -1", []string{"--retries", "-1"}, -1},
		{"absent", []string{"--plan", none}, rfc2544.DefaultRetries},
		{"flag 3", []string{"--retries", "3"}, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := runCLI(t, context.Background(), append([]string{"run", "--transport", "sim", "--dry-run"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := rfc2544.ParsePlan("dry run", []byte(stdout), rfc2544.Plan{})
			if err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if p.Trial.Retries != tt.want {
				t.Errorf("trial.retries %d, want %d", p.Trial.Retries, tt.want)
			}
		})
	}
}

// TestPlanNullKeepsProfile: a field set to null (~) in a plan file leaves
// the profile's value, as checkNode documents; only a value given is checked.
func TestPlanNullKeepsProfile(t *testing.T) {
	p, given, err := rfc2544.ParsePlan("null.yaml", []byte("frame_sizes: ~\nlink_bps: ~\ntrial:\n  duration: ~\n  rest: 1s\n"), mustDefault(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.FrameSizes) != len(rfc2544.DefaultFrameSizes) || p.Trial.Duration != rfc2544.Duration(60e9) || p.Trial.Rest != rfc2544.Duration(1e9) {
		t.Errorf("plan after nulls: sizes %v, duration %v, rest %v", p.FrameSizes, p.Trial.Duration, p.Trial.Rest)
	}
	if given["link_bps"] || given["frame_sizes"] || !given["trial.rest"] {
		t.Errorf("given fields %v: want trial.rest and no null field", given)
	}
}

func mustDefault(t *testing.T) rfc2544.Plan {
	t.Helper()
	p, err := rfc2544.DefaultPlan(rfc2544.ProfileRFC2544)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
