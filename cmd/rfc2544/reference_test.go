package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestReferenceLab: `run --lab` with no lab setting plans the reference DUT
// (30 Mbit/s each way over a 100-packet queue) on a nominal 60 Mbit/s
// line, and any lab setting, --rate 0 included, builds the lab from the
// settings instead (unshaped, the nominal 1 Gbit/s line).
func TestReferenceLab(t *testing.T) {
	dry := func(args ...string) (lab string, line float64) {
		t.Helper()
		out, _, err := runCLI(t, context.Background(), append([]string{"run", "--lab", "--dry-run", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var d struct {
			Lab     string  `json:"lab"`
			LineBps float64 `json:"line_bps"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return d.Lab, d.LineBps
	}
	if lab, line := dry(); !strings.Contains(lab, "shaped to 30mbit over a 100-packet queue") || line != 60e6 {
		t.Errorf("run --lab: lab %q on a %g bit/s line; want the reference DUT on 60 Mbit/s", lab, line)
	}
	if lab, line := dry("--line-rate", "100mbit"); !strings.Contains(lab, "shaped to 30mbit") || line != 100e6 {
		t.Errorf("run --lab --line-rate 100mbit: lab %q on a %g bit/s line; want the reference DUT on 100 Mbit/s", lab, line)
	}
	for _, args := range [][]string{{"--rate", "0"}, {"--mtu", "1500"}} {
		if lab, line := dry(args...); !strings.Contains(lab, "not shaped") || line != 1e9 {
			t.Errorf("run --lab %v: lab %q on a %g bit/s line; want an unshaped lab on the nominal 1 Gbit/s", args, lab, line)
		}
	}
	if lab, _ := dry("--rate", "200mbit"); !strings.Contains(lab, "shaped to 200mbit") {
		t.Errorf("run --lab --rate 200mbit: lab %q", lab)
	}
}
