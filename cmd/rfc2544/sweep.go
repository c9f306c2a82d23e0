package main

import (
	"context"
	"errors"
	"io"

	"github.com/rfc2544/rfc2544/internal/atexit"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// sweepCounts returns the firewall rule counts the command line f sweeps
// (rig.SweepCounts); nil for a single run. A resumed run is one run of a
// sweep and never sweeps again.
func sweepCounts(verb string, f *runFlags, stderr io.Writer) ([]int, error) {
	if f.resume != "" {
		return nil, nil // setupRun refuses the sweep's flags with --resume
	}
	counts, err := f.labFlags.Sweep()
	if err != nil {
		return nil, usagef("%s: %w", verb, err)
	}
	given, name := f.rig.Lab()
	return rig.SweepCounts(rig.SweepInput{Counts: counts, FWRules: f.set()["fw-rules"], PlanFile: f.planFile, Lab: given, LabName: name}, stderr)
}

// runSweep runs verb once per firewall rule count (rig.RunSweep) and
// compares the runs. It returns the last tester-limited run's error (a
// tester-limited run does not stop the sweep). With --dry-run each run
// prints its plan and nothing is compared.
func runSweep(ctx context.Context, verb string, fixed []rfc2544.Test, sf *runFlags, counts []int, args []string, stdout, stderr io.Writer) error {
	return rig.RunSweep(ctx, rig.SweepConfig{Out: sf.out, Counts: counts, Args: args, DryRun: sf.dryRun, Stdout: stdout, Log: stderr, AtExit: atexit.Register,
		Run: func(ctx context.Context, run []string) error {
			f, err := parseRunArgs(verb, fixed, run)
			if err != nil {
				return err
			}
			return runOne(ctx, verb, fixed, f, run, stdout, stderr) // --fw-rules N: one run, even with the plan's lab_sweep
		},
		Carry: func(err error) bool { return errors.Is(err, errTesterLimited) }})
}
