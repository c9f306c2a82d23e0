package lab_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/trials"
)

// One "not supported" sentinel: a caller tests the lab's and the engines'
// errors with the same errors.Is.
func TestErrNotSupportedIsTrials(t *testing.T) {
	err := fmt.Errorf("--rate needs the tbf qdisc: %w", lab.ErrNotSupported)
	if !errors.Is(err, trials.ErrNotSupported) {
		t.Errorf("errors.Is(%v, trials.ErrNotSupported) = false, want true", err)
	}
}
