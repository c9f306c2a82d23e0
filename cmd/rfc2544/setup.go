package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// setupRun checks every flag and the plan, and resolves the ports, without
// creating or sending anything.
func setupRun(verb string, fixed []rfc2544.Test, f *runFlags, args []string) (*runSetup, error) {
	s := &runSetup{verb: verb, flags: f, args: args}
	if f.resume != "" {
		for name := range f.set() {
			if !slices.Contains(resumeFlags, name) {
				return nil, usagef("--%s with --resume: a resumed run takes every setting from its journal; drop --%s", name, name)
			}
		}
		jc, err := rig.ReadResume(f.resume, verb)
		if err != nil {
			return nil, err
		}
		// The journaled command line gives the ports; the plan is the
		// journal's, as it was.
		orig, err := parseRunArgs(verb, fixed, jc.Header.Args)
		if err != nil {
			return nil, fmt.Errorf("--resume %s: the journaled command line no longer parses: %w", f.resume, err)
		}
		orig.json, orig.jsonStream, orig.quiet, orig.resume, orig.out = f.json, f.jsonStream, f.quiet, f.resume, f.resume
		s.flags, f = orig, orig
		s.resume = jc
		s.args = jc.Header.Args
	}
	set := f.set()
	if f.json && f.jsonStream {
		return nil, usagef("--json and --json-stream: choose one (--json writes the results at the end, --json-stream the run as it goes and the results in its end event)")
	}

	// Transport and ports.
	var labSet []string
	for _, n := range labSettingFlags {
		if set[n] {
			labSet = append(labSet, "--"+n)
		}
	}
	pl, err := f.rig.Place(f.plan.IPv6(), labSet, func() (lab.Config, error) { return f.labFlags.Config(tempLabName()) })
	if err != nil {
		return nil, err
	}
	s.place, s.transport, s.ports, s.labName, s.agent = pl, pl.Transport, pl.Ports, pl.LabName, pl.Agent
	if pl.TempLab != nil {
		s.tempLab, s.labCfg = true, *pl.TempLab
	}

	// Safety (RFC 6815), part one: addresses. The route check needs the
	// interfaces and comes with the line rate below.
	if err := rig.CheckDestinations(s.ports, f.rig.AllowAny()); err != nil {
		return nil, err
	}

	// The plan: profile, then plan file, then flags.
	if s.resume != nil {
		s.plan = s.resume.Header.Plan
	} else {
		if s.plan, s.linkGiven, err = rig.BuildPlan(f.planInput(fixed, s.tempLab)); err != nil {
			return nil, err
		}
	}

	// The transport (--transport auto chooses by the ports, the kernel and
	// the frames), then the ceilings measured on it.
	calTransport := ""
	if f.calibration != "" {
		if calTransport, err = rig.CalibrationTransport(f.calibration, s.transport); err != nil {
			return nil, err
		}
	}
	choice, err := rig.Choose(rig.ChooseInput{Placement: pl, Plan: s.plan, Calibration: calTransport, Queues: f.rig.Queues()})
	if err != nil {
		return nil, err
	}
	s.transport, s.auto, s.why = choice.Transport, choice.Auto, choice.Why
	if s.resume != nil && choice.Auto && s.resume.Header.Transport != "" {
		// The run being resumed chose already: its trials go on alike.
		s.transport, s.why = s.resume.Header.Transport, "auto: the transport of the run being resumed"
	}
	if f.calibration != "" {
		pts, err := rig.ReadCalibration(f.calibration, s.transport)
		if err != nil {
			return nil, err
		}
		s.ceilings = pts
	}

	// The line rate percentages refer to, and the ports' own checks.
	inspected, err := rig.CheckPorts(s.ports, f.rig.Force())
	if err != nil {
		return nil, err
	}
	if s.resume == nil {
		switch {
		case set["line-rate"]:
			s.lineNote = "from --line-rate"
		case s.linkGiven || s.plan.LinkBps != 0:
			s.lineNote = "from the plan file"
		default:
			bps, note, err := s.place.LineRate(inspected)
			if err != nil {
				return nil, err
			}
			s.plan.LinkBps, s.lineNote = bps, note
		}
		// Not WithDefaults: the plan is complete (profile, file, flags),
		// and a zero in it was given as zero, for Validate to refuse.
		if err := s.plan.Validate(); err != nil {
			return nil, f.planInput(fixed, s.tempLab).PlanError(err)
		}
	} else {
		s.lineNote = "from the journal"
	}

	// Safety, part two: the rate cap.
	if s.capBps, s.capNote, err = f.rig.Cap(s.plan.LinkBps); err != nil {
		return nil, err
	}
	if err := s.plan.CheckRateCap(s.capBps); err != nil {
		return nil, usagef("--max-rate %s: %w; raise --max-rate, or lower --line-rate or the plan's loads", formatBitRate(s.capBps), err)
	}

	// The output folder.
	s.out = f.out
	if s.out == "" {
		s.out = "rfc2544-results-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if s.resume == nil && !f.dryRun {
		if err := rig.CheckOutFree(s.out, f.overwrite); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// tempLabName names a temporary lab after the process, so two runs never
// collide and a leftover is easy to trace.
func tempLabName() string { return fmt.Sprintf("tmp-%d", os.Getpid()) }

// planInput is how the run's plan is given (rig.BuildPlan).
func (f *runFlags) planInput(fixed []rfc2544.Test, tempLab bool) rig.PlanInput {
	return rig.PlanInput{Profile: f.profile, File: f.planFile, Flags: f.plan, Fixed: fixed, TempLab: tempLab}
}

// sizesString lists frame sizes for the output.
func sizesString(sizes []int) string {
	var b strings.Builder
	for i, s := range sizes {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(framing.SizeName(s)) // a mix by name, as --sizes reads it
	}
	return b.String()
}
