package testseed

import "testing"

func TestSeedReplays(t *testing.T) {
	t.Setenv("RFC2544_SEED", "12345")
	if got := Seed(t, "./internal/testseed"); got != 12345 {
		t.Fatalf("seed %d, want the RFC2544_SEED 12345", got)
	}
	t.Setenv("RFC2544_SEED", "")
	if a, b := Seed(t, "."), Seed(t, "."); a == 0 || a == b {
		t.Fatalf("seeds %d, %d: want drawn from the clock, different", a, b)
	}
}
