package rig

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// planFlags parses args as the plan's flags.
func planFlags(t *testing.T, args ...string) *rfc2544.PlanFlags {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pf := rfc2544.AddPlanFlags(fs, true)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestBuildPlan: the profile, then the plan file, then the flags; the
// default profile is quick for a temporary lab; the file's lab_sweep is
// dropped and its link_bps reported.
func TestBuildPlan(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plan.yaml")
	yaml := "profile: quick\nframe_sizes: [512, 1518]\nlink_bps: 0\ntrial: {duration: 3s}\nlab_sweep: {fw_rules: [0, 100]}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		in        PlanInput
		profile   string
		sizes     int
		trial     time.Duration
		linkGiven bool
	}{
		{"default", PlanInput{}, rfc2544.ProfileRFC2544, len(rfc2544.DefaultFrameSizes), 60 * time.Second, false},
		{"temporary lab", PlanInput{TempLab: true}, rfc2544.ProfileQuick, len(rfc2544.DefaultFrameSizes), time.Second, false},
		{"file", PlanInput{File: file}, rfc2544.ProfileQuick, 2, 3 * time.Second, true},
		{"flags over the file", PlanInput{File: file, Flags: planFlags(t, "--sizes", "64", "--duration", "5s")}, rfc2544.ProfileQuick, 1, 5 * time.Second, true},
		{"profile over the file's", PlanInput{Profile: "rfc2544", File: file}, rfc2544.ProfileRFC2544, 2, 3 * time.Second, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, linkGiven, err := BuildPlan(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if p.Profile != tt.profile || len(p.FrameSizes) != tt.sizes || p.Trial.Duration.D() != tt.trial || linkGiven != tt.linkGiven {
				t.Errorf("profile %s, %d sizes, trial %v, link given %v; want %s, %d, %v, %v",
					p.Profile, len(p.FrameSizes), p.Trial.Duration.D(), linkGiven, tt.profile, tt.sizes, tt.trial, tt.linkGiven)
			}
			if p.LabSweep.FWRules != nil {
				t.Errorf("lab_sweep %v kept: each run of a sweep is one rule count", p.LabSweep.FWRules)
			}
		})
	}
}

// TestBuildPlanErrors: bad input is an *InputError naming where it came
// from.
func TestBuildPlanErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("frame_size: [64]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badProfile := filepath.Join(dir, "profile.yaml")
	if err := os.WriteFile(badProfile, []byte("profile: fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		in   PlanInput
		want []string
	}{
		{"missing file", PlanInput{File: filepath.Join(dir, "none.yaml")}, []string{"--plan ", "none.yaml: no such file; see testdata/plans/"}},
		{"unknown field", PlanInput{File: bad}, []string{"--plan ", `unknown field "frame_size"`}},
		{"unknown profile", PlanInput{Profile: "fast"}, []string{`--profile "fast": unknown; use rfc2544`}},
		{"file's unknown profile", PlanInput{File: badProfile}, []string{"--plan " + badProfile + ": "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := BuildPlan(tt.in)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an *InputError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestPlanError: a Validate error names the flag that set the field, else
// the plan file, else only the field.
func TestPlanError(t *testing.T) {
	validate := func(in PlanInput) error {
		p, _, err := BuildPlan(in)
		if err != nil {
			t.Fatal(err)
		}
		p.LinkBps = 1e9
		return in.PlanError(p.Validate())
	}
	file := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(file, []byte("trial: {retries: 11}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, want string
		in         PlanInput
	}{
		{"flag", "--retries 11: ", PlanInput{Flags: planFlags(t, "--retries", "11")}},
		{"file", "--plan " + file + ": ", PlanInput{File: file}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(tt.in)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tt.want) || !strings.Contains(err.Error(), "trial.retries") {
				t.Errorf("error %v, want an *InputError starting %q naming trial.retries", err, tt.want)
			}
		})
	}
}
