package rig

import (
	"errors"
	"os"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// PlanInput is how a new run's plan is given, as the run verbs take it: a
// profile (--profile), a plan file (--plan) and the plan's flags.
type PlanInput struct {
	Profile string // --profile; "" for the plan file's, else the default
	File    string // --plan FILE, or ""
	Flags   *rfc2544.PlanFlags
	// Fixed is the test of a one-test verb (rfc2544.PlanFlags.Apply).
	Fixed []rfc2544.Test
	// TempLab makes quick the default profile (a temporary lab is a
	// first try, not a certification).
	TempLab bool
}

// BuildPlan makes the effective plan of a new run: the profile's plan, the
// plan file over it, the flags over both. linkGiven reports a plan file that
// sets link_bps (even to 0). The plan is complete (WithDefaults before the
// file and the flags), so a zero in it was given as zero, for Validate to
// refuse. A plan file's lab_sweep is dropped: each run of a sweep (Sweep)
// is one rule count. Errors are *InputError naming --plan, --profile or the
// flag.
func BuildPlan(in PlanInput) (p rfc2544.Plan, linkGiven bool, err error) {
	profile := in.Profile
	if profile == "" && in.File != "" {
		pp, err := rfc2544.LoadPlanProfile(in.File)
		if err != nil {
			return rfc2544.Plan{}, false, PlanFileError(in.File, err)
		}
		profile = pp
	}
	if profile == "" {
		profile = "rfc2544"
		if in.TempLab {
			profile = "quick"
		}
	}
	p, err = rfc2544.DefaultPlan(profile)
	p = p.WithDefaults() // complete: a zero later on was given as zero
	if err != nil {
		if in.Profile == "" && in.File != "" {
			return p, false, inputf("--plan %s: %w", in.File, err)
		}
		return p, false, inputf("--profile %s: unknown; use rfc2544 (the standard's durations) or quick (short trials)", quote(profile))
	}
	if in.File != "" {
		var given map[string]bool
		if p, given, err = rfc2544.LoadPlan(in.File, p); err != nil {
			return p, false, PlanFileError(in.File, err)
		}
		linkGiven = given["link_bps"]
		p.LabSweep = rfc2544.LabSweep{}
		p.Profile = profile
	}
	if in.Flags != nil {
		if err := in.Flags.Apply(&p, in.Fixed); err != nil {
			return p, linkGiven, &InputError{err}
		}
	}
	return p, linkGiven, nil
}

// PlanError says where a bad plan field (an rfc2544.Plan.Validate error)
// came from: its flag when the command line set it, else the plan file.
// The message after that is Validate's either way.
func (in PlanInput) PlanError(err error) error {
	if in.Flags != nil {
		if flag := in.Flags.Flag(err); flag != "" {
			return inputf("%s: %w", flag, err)
		}
	}
	if in.File != "" {
		return inputf("--plan %s: %w", in.File, err)
	}
	return &InputError{err}
}

// PlanFileError is an error reading the plan file path (--plan) as an
// *InputError: a missing file points to the examples.
func PlanFileError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return inputf("--plan %s: no such file; see testdata/plans/ for examples", path)
	}
	return inputf("--plan %w", err)
}
