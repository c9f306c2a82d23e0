package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writePlan writes a plan file in a test folder and returns its path.
func writePlan(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPlanSweepBadInput: a plan's bad lab_sweep is refused before anything
// is created, naming --plan, the field and the fix.
func TestPlanSweepBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		args       []string
		want       []string
	}{
		{"negative", "lab_sweep: {fw_rules: [0, -5]}\n", []string{"--lab"},
			[]string{"--plan ", "lab_sweep.fw_rules", "invalid rule count -5: use counts of 0-100000"}},
		{"too many rules", "lab_sweep: {fw_rules: [0, 100001]}\n", []string{"--lab"},
			[]string{"lab_sweep.fw_rules", "invalid rule count 100001"}},
		{"one count", "lab_sweep: {fw_rules: [1000]}\n", []string{"--lab"},
			[]string{"lab_sweep.fw_rules", "give at least two rule counts"}},
		{"empty", "lab_sweep: {fw_rules: []}\n", []string{"--lab"},
			[]string{"lab_sweep.fw_rules", "give at least two rule counts"}},
		{"twice", "lab_sweep: {fw_rules: [0, 100, 100]}\n", []string{"--lab"},
			[]string{"lab_sweep.fw_rules", "rule count 100 is listed twice"}},
		{"unknown field", "lab_sweep: {fw-rules: [0, 100]}\n", []string{"--lab"},
			[]string{"--plan ", `unknown field "fw-rules" in lab_sweep`, `did you mean "fw_rules"`}},
		{"not numbers", "lab_sweep: {fw_rules: [0, 1k]}\n", []string{"--lab"},
			[]string{"--plan ", "lab_sweep.fw_rules[1]", "not a whole number"}},
		{"named lab", "lab_sweep: {fw_rules: [0, 100]}\n", []string{"--lab", "demo"},
			[]string{"lab_sweep runs each rule count on a temporary lab", "add --lab (without a name)"}},
		{"ports", "lab_sweep: {fw_rules: [0, 100]}\n",
			[]string{"--port-a", "lo", "--addr-a", "198.18.1.2/24", "--port-b", "lo", "--addr-b", "198.19.1.2/24"},
			[]string{"lab_sweep runs each rule count on a temporary lab"}},
		{"flag twice", "frame_sizes: [512]\n", []string{"--lab", "--fw-rules-sweep", "0,100,0"},
			[]string{"--fw-rules-sweep 0,100,0", "rule count 0 is listed twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"throughput", "--plan", writePlan(t, tc.yaml), "--dry-run", "--out", out}, tc.args...)
			stdout, stderr, err := runCLI(t, context.Background(), args...)
			if err == nil {
				t.Fatalf("no error, want %q\nstdout:\n%s\nstderr:\n%s", tc.want, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want %q in it", err, w)
				}
			}
			if stdout != "" || strings.Contains(stderr, "sweep: ") {
				t.Errorf("something ran before the error:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// TestPlanSweepRuns: a plan's lab_sweep runs once per rule count on a
// temporary lab of that many rules (seen through --dry-run, which creates
// nothing), and a flag wins over the plan: --fw-rules-sweep replaces its
// counts, --fw-rules N makes one run at N; both say so.
func TestPlanSweepRuns(t *testing.T) {
	plan := writePlan(t, "profile: quick\nframe_sizes: [512]\nlab_sweep: {fw_rules: [0, 1000]}\n")
	for _, tc := range []struct {
		name     string
		args     []string
		want     []int  // the rule counts run, in order
		note     string // on stderr
		noResult bool
	}{
		{name: "plan", want: []int{0, 1000}},
		{name: "sweep flag wins", args: []string{"--fw-rules-sweep", "5,60"}, want: []int{5, 60},
			note: "--fw-rules-sweep overrides the plan's lab_sweep.fw_rules [0 1000]"},
		{name: "rules flag wins", args: []string{"--fw-rules", "7"}, want: []int{7},
			note: "--fw-rules overrides the plan's lab_sweep.fw_rules [0 1000]: one run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"throughput", "--lab", "--plan", plan, "--dry-run", "--out", out}, tc.args...)
			stdout, stderr, err := runCLI(t, context.Background(), args...)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, stderr)
			}
			if !strings.Contains(stderr, tc.note) {
				t.Errorf("stderr:\n%s\nwant %q", stderr, tc.note)
			}
			// Each run's dry run names its temporary lab's rules
			// ("MTU 1500, 1000 firewall rules"; none at 0).
			runs := strings.Split(stdout, "# rfc2544 throughput --dry-run")[1:]
			if len(runs) != len(tc.want) {
				t.Fatalf("%d dry runs, want %d:\n%s", len(runs), len(tc.want), stdout)
			}
			for i, n := range tc.want {
				lab := labLine(runs[i])
				has := strings.Contains(lab, " firewall rules")
				if n == 0 && has || n > 0 && !strings.Contains(lab, ", "+strconv.Itoa(n)+" firewall rules") {
					t.Errorf("run %d: want %d rules:\n%s", i, n, runs[i])
				}
				if strings.Contains(runs[i], "lab_sweep") {
					t.Errorf("run %d: its plan shows lab_sweep (each run is one count):\n%s", i, runs[i])
				}
				if len(tc.want) > 1 && !strings.Contains(runs[i], filepath.Join(out, "fw-rules-"+strconv.Itoa(n))) {
					t.Errorf("run %d: want its output in %s:\n%s", i, filepath.Join(out, "fw-rules-"+strconv.Itoa(n)), runs[i])
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--dry-run created %s (stat: %v)", out, err)
			}
		})
	}
}

// labLine is the "# lab: ..." line of a dry run's output.
func labLine(dry string) string {
	for _, l := range strings.Split(dry, "\n") {
		if strings.HasPrefix(l, "# lab: ") {
			return l
		}
	}
	return ""
}
