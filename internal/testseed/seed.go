// Package testseed gives randomized tests their seed: drawn from the clock,
// or taken from RFC2544_SEED to replay a failure, and logged either way
// with the command that replays it.
package testseed

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Seed returns the test's seed and logs how to replay it; pkg is the
// package path as go test takes it (e.g. "./trials"). A malformed
// RFC2544_SEED fails the test.
func Seed(t testing.TB, pkg string) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RFC2544_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RFC2544_SEED=%q: want a decimal seed, as logged by a previous run", s)
		}
		seed = v
	}
	t.Logf("seed %d (replay: RFC2544_SEED=%d go test -run '^%s$' %s)", seed, seed, t.Name(), pkg)
	return seed
}
