// Package pending marks tests that state a goal of an open issue the code
// does not meet yet.
package pending

import (
	"os"
	"testing"
)

// Skip skips t unless RFC2544_PENDING=1: CI stays a gate for what works,
// and the goal stays written down and runnable. The issue's closing note
// says which tests are pending and what they measured.
func Skip(t testing.TB, issue int, why string) {
	t.Helper()
	if os.Getenv("RFC2544_PENDING") == "" {
		t.Skipf("pending issue %d (RFC2544_PENDING=1 runs it): %s", issue, why)
	}
}
