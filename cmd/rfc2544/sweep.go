package main

import (
	"fmt"
	"io"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// sweepCounts returns the firewall rule counts a run sweeps (runSweep):
// --fw-rules-sweep, else the plan file's lab_sweep.fw_rules; nil for a
// single run. Every check is made here, before any traffic. A flag wins
// over the plan file, as everywhere: --fw-rules-sweep replaces the plan's
// counts and --fw-rules N makes one run at N rules, each with a note on
// stderr. A resumed run is one run of a sweep and never sweeps again.
func sweepCounts(verb string, f *runFlags, stderr io.Writer) ([]int, error) {
	if f.resume != "" {
		return nil, nil // setupRun refuses the sweep's flags with --resume
	}
	counts, err := f.labFlags.Sweep()
	if err != nil {
		return nil, usagef("%s: %w", verb, err)
	}
	if f.planFile == "" {
		return counts, nil
	}
	p, _, err := rfc2544.LoadPlan(f.planFile, rfc2544.Plan{})
	if err != nil {
		return nil, rig.PlanFileError(f.planFile, err)
	}
	planned := p.LabSweep.FWRules
	if planned == nil {
		return counts, nil
	}
	if err := lab.ValidateSweep(planned); err != nil {
		return nil, usagef("--plan %s: %w", f.planFile, &rfc2544.PlanError{Field: "lab_sweep.fw_rules", Value: planned, Fix: err.Error()})
	}
	switch set := f.set(); {
	case counts != nil:
		fmt.Fprintf(stderr, "sweep: --fw-rules-sweep overrides the plan's lab_sweep.fw_rules %v\n", planned)
		return counts, nil
	case set["fw-rules"]:
		fmt.Fprintf(stderr, "sweep: --fw-rules overrides the plan's lab_sweep.fw_rules %v: one run\n", planned)
		return nil, nil
	}
	if given, name := f.rig.Lab(); !given || name != "" {
		return nil, usagef("--plan %s: lab_sweep runs each rule count on a temporary lab of its own: add --lab (without a name), or remove lab_sweep from the plan", f.planFile)
	}
	return planned, nil
}
