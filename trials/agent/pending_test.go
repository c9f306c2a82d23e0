package agent_test

import (
	"os"
	"testing"
)

// pendingIssue skips a test that states a goal of an open issue the code does
// not meet yet, unless RFC2544_PENDING=1: CI stays a gate for what works,
// and the goal stays written down and runnable. The closing notes of the
// issue say which tests are pending and what they measured.
func pendingIssue(t *testing.T, issue int, why string) {
	t.Helper()
	if os.Getenv("RFC2544_PENDING") == "" {
		t.Skipf("pending issue %d (RFC2544_PENDING=1 runs it): %s", issue, why)
	}
}
