package reports

import "testing"

func TestPairLabels(t *testing.T) {
	tests := []struct{ a, b, wantA, wantB string }{
		{"mtu1500.json", "x/mtu9000.json", "mtu1500.json", "mtu9000.json"},
		{"dut1/results.json", "dut2/results.json", "dut1/results.json", "dut2/results.json"},
		{"/a/run/results.json", "/b/run/results.json", "a/run/results.json", "b/run/results.json"},
		{"same.json", "same.json", "same.json", "same.json"},
	}
	for _, tt := range tests {
		a, b := PairLabels(tt.a, tt.b)
		if a != tt.wantA || b != tt.wantB {
			t.Errorf("PairLabels(%q, %q) = %q, %q; want %q, %q", tt.a, tt.b, a, b, tt.wantA, tt.wantB)
		}
	}
}

func TestRunLabels(t *testing.T) {
	got := RunLabels([]string{"sweep/fw-rules-100/results.json", "sweep/fw-rules-1000/results.json", "sweep/fw-rules-10/results.json"})
	want := []string{"fw-rules-100", "fw-rules-1000", "fw-rules-10"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("RunLabels()[%d] = %q, want %q (all: %q)", i, got[i], want[i], got)
		}
	}
	if got := RunLabels([]string{"a.json", "a.json"}); got[0] != "a.json" || got[1] != "a.json" {
		t.Errorf("RunLabels(same file twice) = %q, want the file names", got)
	}
}
