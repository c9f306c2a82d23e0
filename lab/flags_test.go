package lab

import (
	"runtime"
	"strings"
	"testing"
)

// TestConfigFlagsRoundTrip: Config.Flags writes what ParseConfig reads
// back into the same settings.
func TestConfigFlagsRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		{"--rate", "50mbit", "--limit", "1000"},
		{"--rate-ab", "50mbit", "--rate-ba", "20mbit", "--loss", "1%"},
		{"--mtu-a", "9000", "--mtu-b", "1500", "--fw-rules", "100"},
		{"--dut", "relay", "--delay", "2ms", "--jitter", "500us", "--reorder", "2%", "--duplicate", "1%"},
		{"--no-rps"},
	} {
		c, err := ParseConfig("x", args)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		back := strings.Fields(c.Flags())
		if c.DUT == DUTRelay {
			back = append(back, "--dut", "relay")
		}
		c2, err := ParseConfig("x", back)
		if err != nil {
			t.Fatalf("%v: Flags %q: %v", args, c.Flags(), err)
		}
		if c.Flags() != c2.Flags() || c.AtoB != c2.AtoB || c.BtoA != c2.BtoA || c.Relay != c2.Relay || c.MTUA != c2.MTUA || c.MTUB != c2.MTUB {
			t.Errorf("%v: Flags %q reads back as %q (%+v vs %+v)", args, c.Flags(), c2.Flags(), c, c2)
		}
	}
}

func TestTesterCPU(t *testing.T) {
	n := runtime.NumCPU()
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	tests := []struct {
		dut  []int
		want int
	}{
		{nil, 0},      // no RPS: nothing to keep off
		{all, 0},      // every CPU is the DUT's
		{[]int{0}, 2}, // CPU 1, 1-based
	}
	if n == 1 {
		tests[2].want = 0
	}
	for _, tt := range tests {
		if got := (&State{DUTCPUs: tt.dut}).TesterCPU(); got != tt.want {
			t.Errorf("DUT CPUs %v of %d: tester CPU %d (1-based), want %d", tt.dut, n, got, tt.want)
		}
	}
}
