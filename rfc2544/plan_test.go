package rfc2544

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite testdata/plans from DefaultPlan")

func TestDefaultPlan(t *testing.T) {
	tests := []struct {
		name, profile string
		want          string // wanted Profile, or "" when an error is wanted
	}{
		{name: "empty is rfc2544", profile: "", want: ProfileRFC2544},
		{name: "rfc2544", profile: "rfc2544", want: ProfileRFC2544},
		{name: "quick", profile: "quick", want: ProfileQuick},
		{name: "unknown", profile: "fast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DefaultPlan(tt.profile)
			if tt.want == "" {
				if err == nil || !strings.Contains(err.Error(), `"fast"`) {
					t.Fatalf("DefaultPlan(%q) error = %v, want one naming the profile", tt.profile, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Profile != tt.want {
				t.Errorf("Profile = %q, want %q", p.Profile, tt.want)
			}
			if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "link_bps") {
				t.Errorf("a default plan without link_bps validated: %v", err)
			}
			p.LinkBps = 1e9
			if err := p.Validate(); err != nil {
				t.Errorf("default plan with link_bps: %v", err)
			}
			if diff := cmp.Diff(p, p.WithDefaults()); diff != "" {
				t.Errorf("WithDefaults changed a complete plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	rfc, _ := DefaultPlan(ProfileRFC2544)
	quick, _ := DefaultPlan(ProfileQuick)
	rfc.LinkBps, quick.LinkBps = 1e9, 1e9
	custom := rfc
	custom.FrameSizes = []int{64, 9000}
	custom.Throughput.ResolutionPercent = 0.1
	custom.Throughput.ResolutionRelativePercent = 0 // not filled when resolution_percent is set
	custom.Throughput.StepPercent = 5
	custom.Throughput.StartPercent = 5 // follows step_percent when not set
	custom.Bidirectional = true
	tests := []struct {
		name string
		in   Plan
		want Plan
	}{
		{name: "zero plan is rfc2544", in: Plan{LinkBps: 1e9}, want: rfc},
		{name: "quick profile", in: Plan{Profile: ProfileQuick, LinkBps: 1e9}, want: quick},
		{name: "set fields are kept", in: Plan{LinkBps: 1e9, FrameSizes: []int{64, 9000}, Bidirectional: true,
			Throughput: ThroughputConfig{ResolutionPercent: 0.1, StepPercent: 5}}, want: custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.WithDefaults()); diff != "" {
				t.Errorf("WithDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidate checks that every bad parameter fails before any trial, with
// an error naming the YAML field.
func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(p *Plan)
		field string
	}{
		{"resolution negative", func(p *Plan) { p.Throughput.ResolutionPercent = -1 }, "throughput.resolution_percent"},
		{"min above max", func(p *Plan) {
			p.Throughput.MinPercent = 60
			p.Throughput.MaxPercent = 50
			p.Throughput.InitialPercent = 50
		}, "throughput.min_percent"},
		{"initial below min", func(p *Plan) { p.Throughput.MinPercent = 20; p.Throughput.InitialPercent = 10 }, "throughput.initial_percent"},
		{"initial above max", func(p *Plan) { p.Throughput.MaxPercent = 50 }, "throughput.initial_percent"},
		{"max above 100", func(p *Plan) { p.Throughput.MaxPercent = 150 }, "throughput.max_percent"},
		{"start outside", func(p *Plan) { p.Throughput.StartPercent = 0.01 }, "throughput.start_percent"},
		{"unknown search", func(p *Plan) { p.Throughput.Search = "golden" }, "throughput.search"},
		{"negative tolerance", func(p *Plan) { p.Throughput.LossTolerancePercent = -0.1 }, "throughput.loss_tolerance_percent"},
		{"tolerance 100", func(p *Plan) { p.Throughput.LossTolerancePercent = 100 }, "throughput.loss_tolerance_percent"},
		{"max trials", func(p *Plan) { p.Throughput.MaxTrials = -3 }, "throughput.max_trials"},
		{"latency repetitions", func(p *Plan) { p.Latency.Repetitions = -1 }, "latency.repetitions"},
		{"b2b repetitions", func(p *Plan) { p.BackToBack.Repetitions = -1 }, "back_to_back.repetitions"},
		{"burst cap above 30s", func(p *Plan) { p.BackToBack.BurstCap = Duration(31 * time.Second) }, "back_to_back.burst_cap"},
		{"b2b min step", func(p *Plan) { p.BackToBack.MinStepFrames = -5 }, "back_to_back.min_step_frames"},
		{"frame loss step", func(p *Plan) { p.FrameLoss.StepPercent = 120 }, "frame_loss.step_percent"},
		{"unknown test", func(p *Plan) { p.Tests = []Test{TestThroughput, "jitter"} }, "tests"},
		{"probe is not a test", func(p *Plan) { p.Tests = []Test{TestProbe} }, "tests"},
		{"duplicate test", func(p *Plan) { p.Tests = []Test{TestLatency, TestLatency} }, "tests"},
		{"frame size zero", func(p *Plan) { p.FrameSizes = []int{64, 0} }, "frame_sizes"},
		{"frame size negative", func(p *Plan) { p.FrameSizes = []int{-64} }, "frame_sizes"},
		{"frame size duplicated", func(p *Plan) { p.FrameSizes = []int{64, 128, 64} }, "frame_sizes"},
		{"link_bps negative", func(p *Plan) { p.LinkBps = -1 }, "link_bps"},
		{"link_bps missing", func(p *Plan) { p.LinkBps = 0 }, "link_bps"},
		{"flows", func(p *Plan) { p.Flows = -1 }, "flows"},
		{"negative settle", func(p *Plan) { p.Trial.Settle = Duration(-time.Second) }, "trial.settle"},
		{"negative duration", func(p *Plan) { p.Trial.Duration = Duration(-time.Second) }, "trial.duration"},
		{"unknown profile", func(p *Plan) { p.Profile = "fast" }, "profile"},
		{"recovery overload", func(p *Plan) { p.Recovery.Overload = Duration(-1) }, "system_recovery.overload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPlan(nil)
			tt.edit(&p)
			r := &Runner{Tester: failTester{t}, Plan: p, Sleep: noSleep}
			res, err := r.Run(context.Background())
			if err == nil {
				t.Fatal("Run accepted the plan")
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name the field %q", err, tt.field)
			}
			if res == nil || res.Error != err.Error() {
				t.Errorf("Results.Error = %v, want the error", res)
			}
			// The procedures refuse the plan too.
			if _, err := r.Throughput(context.Background(), 64); err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Throughput error = %v, want one naming %q", err, tt.field)
			}
		})
	}
	t.Run("zero resolution without defaults", func(t *testing.T) {
		p := testPlan(nil)
		p.Throughput.ResolutionPercent = 0 // WithDefaults would fill the relative one
		p.Throughput.ResolutionRelativePercent = 0
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "throughput.resolution_percent") {
			t.Errorf("Validate = %v, want an error naming throughput.resolution_percent", err)
		}
	})
	t.Run("no tester", func(t *testing.T) {
		r := &Runner{Plan: testPlan(nil)}
		if _, err := r.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Tester") {
			t.Errorf("Run without a Tester: %v", err)
		}
	})
}

// TestSamplePlans checks that the sample plans in testdata/plans parse
// strictly, validate, and are the profiles' effective plans (run with
// -update to rewrite them).
func TestSamplePlans(t *testing.T) {
	for _, profile := range []string{ProfileRFC2544, ProfileQuick} {
		t.Run(profile, func(t *testing.T) {
			want, err := DefaultPlan(profile)
			if err != nil {
				t.Fatal(err)
			}
			want.LinkBps = 1e9
			path := filepath.Join("..", "testdata", "plans", profile+".yaml")
			if *update {
				var b bytes.Buffer
				b.WriteString("# The effective plan of the " + profile + " profile on 1 Gbit/s ports\n")
				b.WriteString("# (rfc2544.DefaultPlan(\"" + profile + "\") with link_bps set).\n")
				b.WriteString("# Regenerate: go test ./rfc2544 -run TestSamplePlans -update\n")
				enc := yaml.NewEncoder(&b)
				enc.SetIndent(2)
				if err := enc.Encode(want); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dec := yaml.NewDecoder(bytes.NewReader(data))
			dec.KnownFields(true)
			var got Plan
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			if err := got.WithDefaults().Validate(); err != nil {
				t.Fatalf("%s does not validate: %v", path, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s is not the %s profile (-want +got); run with -update:\n%s", path, profile, diff)
			}
		})
	}
	t.Run("bad duration names the fix", func(t *testing.T) {
		var p Plan
		err := yaml.Unmarshal([]byte("trial:\n  duration: sixty\n"), &p)
		if err == nil || !strings.Contains(err.Error(), "60s") {
			t.Errorf("error = %v, want one showing how to write a duration", err)
		}
	})
}
