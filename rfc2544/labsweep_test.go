package rfc2544

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlanLabSweep: lab_sweep is read as strictly as the rest of the plan;
// its errors name the field, the line and the fix. The counts' values are
// the command's to check (lab.ValidateSweep).
func TestPlanLabSweep(t *testing.T) {
	base, err := DefaultPlan(ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, yaml string
		want       []int
		wantErr    []string // substrings of the error; nil: no error
	}{
		{name: "flow list", yaml: "lab_sweep: {fw_rules: [0, 100, 1000, 10000]}\n", want: []int{0, 100, 1000, 10000}},
		{name: "block list", yaml: "frame_sizes: [512]\nlab_sweep:\n  fw_rules:\n    - 0\n    - 1000\n", want: []int{0, 1000}},
		{name: "absent", yaml: "frame_sizes: [512]\n"},
		{name: "null keeps none", yaml: "lab_sweep: null\n"},
		{name: "unknown field", yaml: "lab_sweep: {fw_rule: [0, 100]}\n",
			wantErr: []string{"line 1", `unknown field "fw_rule" in lab_sweep`, `did you mean "fw_rules"`}},
		{name: "unknown top field", yaml: "lab_swep: {fw_rules: [0, 100]}\n",
			wantErr: []string{"line 1", `"lab_swep"`, `did you mean "lab_sweep"`}},
		{name: "not a list", yaml: "lab_sweep:\n  fw_rules: 100\n",
			wantErr: []string{"line 2", "lab_sweep.fw_rules: want a list, e.g. [0, 100, 1000, 10000]"}},
		{name: "not a number", yaml: "lab_sweep: {fw_rules: [0, many]}\n",
			wantErr: []string{"line 1", "lab_sweep.fw_rules[1]", `"many" is not a whole number`}},
		{name: "not a mapping", yaml: "lab_sweep: [0, 100]\n",
			wantErr: []string{"line 1", "lab_sweep: want a mapping of fields (fw_rules)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, given, err := ParsePlan("plan.yaml", []byte(tt.yaml), base)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, want one with %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q: want %q in it", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.LabSweep.FWRules); diff != "" {
				t.Errorf("fw_rules (-want +got):\n%s", diff)
			}
			if tt.want != nil && !given["lab_sweep.fw_rules"] {
				t.Errorf("given %v: want lab_sweep.fw_rules", given)
			}
			// A sweep is the command's: the runner's plan still validates.
			if err := p.Validate(); err != nil && !strings.Contains(err.Error(), "link_bps") {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// TestPlanLabSweepOutput: a plan without a sweep shows none (--dry-run), a
// sweep round-trips through YAML, and JSON (results) never holds one.
func TestPlanLabSweepOutput(t *testing.T) {
	p, err := DefaultPlan(ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(y), "lab_sweep") || strings.Contains(string(j), "lab_sweep") {
		t.Errorf("a plan without a sweep shows one:\n%s\n%s", y, j)
	}
	p.LabSweep.FWRules = []int{0, 100, 1000, 10000}
	if y, err = p.YAML(); err != nil {
		t.Fatal(err)
	}
	back, _, err := ParsePlan("again.yaml", y, Plan{})
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if diff := cmp.Diff(p.LabSweep, back.LabSweep); diff != "" {
		t.Errorf("YAML round trip (-want +got):\n%s", diff)
	}
	// A run's results hold its one setting (the lab's), never the sweep.
	if j, err = json.Marshal(p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(j), "lab_sweep") || strings.Contains(string(j), "fw_rules") {
		t.Errorf("the plan's JSON holds the sweep:\n%s", j)
	}
}

// TestFirewallPlanSample: testdata/plans/firewall.yaml parses strictly and
// sweeps 0, 100, 1000 and 10000 rules.
func TestFirewallPlanSample(t *testing.T) {
	base, err := DefaultPlan(ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := LoadPlan(filepath.Join("..", "testdata", "plans", "firewall.yaml"), base)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 100, 1000, 10000}, p.LabSweep.FWRules); diff != "" {
		t.Errorf("fw_rules (-want +got):\n%s", diff)
	}
}
