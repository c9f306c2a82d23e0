package rfc2544

import (
	"context"

	"github.com/rfc2544/rfc2544/trials"
)

// Tester runs one trial. The real traffic engine and SimDUT implement it.
// Run returns the trial's result, or an error when the trial could not be run
// at all (a tester-limited trial is a result, not an error). When ctx is
// cancelled mid-trial, Run returns what it measured so far with ctx.Err().
type Tester interface {
	Run(ctx context.Context, spec trials.Spec) (trials.Result, error)
}
