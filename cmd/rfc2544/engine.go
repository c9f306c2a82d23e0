package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// engine is the raw traffic engine as the run uses it.
type engine = rig.Engine

// openEngine opens the raw engine (trials.Open): both ports, their
// receivers, and ARP resolution of the DUT on each side.
var openEngine = func(ctx context.Context, cfg trials.Config) (engine, error) {
	e, err := trials.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, w := range e.PauseWarnings() {
		fmt.Fprintln(os.Stderr, "rfc2544: warning:", w)
	}
	return e, nil
}

// openXDPEngine, when set (tests), replaces trials.OpenXDP.
var openXDPEngine func(ctx context.Context, cfg trials.Config) (engine, error)
