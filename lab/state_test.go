package lab_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/lab"
)

// A run's results describe its lab: what it is and the settings that make
// the ground truth.
func TestStateDescribesTheDUT(t *testing.T) {
	st := &lab.State{Name: "x", Topology: lab.TopologyRouter, DUT: lab.DUTKernel,
		Config: lab.Config{MTUA: 1500, MTUB: 9000, AtoB: lab.Shaping{RateBps: 100e6, LossPercent: 1}, FWRules: 10}}
	want := map[string]string{"lab": "x", "topology": "router", "dut": "kernel", "mtu_a": "1500", "mtu_b": "9000",
		"rate_ab_bps": "100000000", "limit_ab_packets": "0", "burst_ab_bytes": "125000", "loss_ab_percent": "1", "fw_rules": "10"}
	if d := cmp.Diff(want, st.Settings()); d != "" {
		t.Errorf("Settings() (-want +got):\n%s", d)
	}
	if d := st.Description(true); !strings.HasPrefix(d, "temporary lab x: router topology, kernel DUT (") {
		t.Errorf("Description(true) = %q", d)
	}
	if d := st.Description(false); !strings.HasPrefix(d, "lab x: ") {
		t.Errorf("Description(false) = %q", d)
	}
}
