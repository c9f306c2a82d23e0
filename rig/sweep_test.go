package rig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStripFlags(t *testing.T) {
	got := stripFlags([]string{"--lab", "--fw-rules-sweep", "0,100", "--out=x", "--sizes", "64", "-out", "y", "--fw-rules-sweep=1,2"}, "fw-rules-sweep", "out")
	if want := []string{"--lab", "--sizes", "64"}; !slices.Equal(got, want) {
		t.Errorf("stripFlags = %q, want %q", got, want)
	}
}

// TestSweepCounts: the flag's counts, else the plan's (on a temporary lab
// only); --fw-rules N over the plan's makes one run; each override says so.
func TestSweepCounts(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("lab_sweep: {fw_rules: [0, 1000]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		in       SweepInput
		want     []int
		log, err string
	}{
		{"no sweep", SweepInput{Lab: true}, nil, "", ""},
		{"flag", SweepInput{Counts: []int{0, 10}, Lab: true}, []int{0, 10}, "", ""},
		{"plan", SweepInput{PlanFile: plan, Lab: true}, []int{0, 1000}, "", ""},
		{"flag over plan", SweepInput{Counts: []int{5, 6}, PlanFile: plan, Lab: true}, []int{5, 6}, "--fw-rules-sweep overrides", ""},
		{"one count over plan", SweepInput{FWRules: true, PlanFile: plan, Lab: true}, nil, "--fw-rules overrides the plan's lab_sweep.fw_rules [0 1000]: one run", ""},
		{"plan on a named lab", SweepInput{PlanFile: plan, Lab: true, LabName: "demo"}, nil, "", "add --lab (without a name)"},
		{"plan without a lab", SweepInput{PlanFile: plan}, nil, "", "lab_sweep runs each rule count on a temporary lab"},
		{"missing plan", SweepInput{PlanFile: plan + ".none", Lab: true}, nil, "", "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log strings.Builder
			got, err := SweepCounts(tt.in, &log)
			if tt.err != "" {
				var ie *InputError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want an *InputError with %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) || !strings.Contains(log.String(), tt.log) {
				t.Errorf("SweepCounts = %v, %v, log %q; want %v, log with %q", got, err, log.String(), tt.want, tt.log)
			}
		})
	}
}

// TestRunSweep: one run per count with its own --fw-rules and --out, a
// carried error does not stop the sweep, and the runs are compared into
// the sweep's folder.
func TestRunSweep(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "results", "mtu1500.json"))
	if err != nil {
		t.Fatal(err)
	}
	limited := errors.New("tester-limited")
	out := t.TempDir()
	var runs [][]string
	var stdout, log strings.Builder
	err = RunSweep(context.Background(), SweepConfig{Out: out, Counts: []int{0, 100}, Stdout: &stdout, Log: &log,
		Args: []string{"--lab", "--fw-rules-sweep", "0,100", "--out", "x", "--sizes", "64"},
		Run: func(_ context.Context, args []string) error {
			runs = append(runs, args)
			dir := args[len(args)-1]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "results.json"), fixture, 0o644); err != nil {
				return err
			}
			if len(runs) == 1 {
				return limited
			}
			return nil
		},
		Carry: func(err error) bool { return errors.Is(err, limited) },
	})
	if !errors.Is(err, limited) {
		t.Errorf("RunSweep = %v, want the carried error", err)
	}
	want := [][]string{
		{"--lab", "--sizes", "64", "--fw-rules", "0", "--out", filepath.Join(out, "fw-rules-0")},
		{"--lab", "--sizes", "64", "--fw-rules", "100", "--out", filepath.Join(out, "fw-rules-100")},
	}
	if !slices.EqualFunc(runs, want, slices.Equal) {
		t.Errorf("runs %q, want %q", runs, want)
	}
	for _, f := range []string{"compare.txt", "compare.json", "compare-throughput.svg", "compare-throughput.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stdout.String(), "100 rules") || !strings.Contains(log.String(), "sweep: 100 firewall rules -> ") {
		t.Errorf("stdout:\n%s\nlog:\n%s", stdout.String(), log.String())
	}

	// An error Carry does not accept stops the sweep.
	runs = nil
	err = RunSweep(context.Background(), SweepConfig{Out: t.TempDir(), Counts: []int{0, 100}, Stdout: &stdout, Log: &log, Carry: func(error) bool { return false },
		Run: func(_ context.Context, args []string) error { runs = append(runs, args); return limited }})
	if err == nil || !strings.HasPrefix(err.Error(), "sweep at 0 rules: ") || len(runs) != 1 {
		t.Errorf("RunSweep = %v after %d runs, want it stopped at 0 rules", err, len(runs))
	}
}
