package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// The run verb and the one-test verbs (throughput, latency, loss, b2b) share
// their flags and their whole flow; a one-test verb is run with --tests fixed.

// testVerbs are the one-test verbs.
var testVerbs = []struct {
	name, summary string
	test          rfc2544.Test
}{
	{"throughput", "run the throughput test (RFC 2544 §26.1) only", rfc2544.TestThroughput},
	{"latency", "run the latency test (RFC 2544 §26.2) only", rfc2544.TestLatency},
	{"loss", "run the frame loss rate test (RFC 2544 §26.3) only", rfc2544.TestFrameLoss},
	{"b2b", "run the back-to-back test (RFC 2544 §26.4, RFC 9004) only", rfc2544.TestBackToBack},
}

// Transports (rig's).
const (
	transportRaw = rig.Raw
	transportUDP = rig.UDP
	transportXDP = rig.XDP
	transportSim = rig.Sim
)

// runFlags are the parsed flags of a run.
type runFlags struct {
	fs   *flag.FlagSet
	plan *rfc2544.PlanFlags // the plan's flags (--tests, --sizes, --duration ...)
	rig  *rig.Flags         // where and how: --lab, --port-a ..., --transport, --agent, --max-rate

	profile, planFile, out, resume string
	json, quiet, dryRun            bool
	jsonStream, overwrite          bool
	calibration                    string
	labFlags                       *lab.Flags
}

func newRunFlags(verb string, fixed []rfc2544.Test) *runFlags {
	f := &runFlags{fs: flag.NewFlagSet(verb, flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(io.Discard)
	f.plan = rfc2544.AddPlanFlags(fs, fixed == nil)
	f.rig = rig.AddFlags(fs)
	fs.StringVar(&f.profile, "profile", "", "preset `name`: rfc2544 (the standard's durations) or quick (short trials); default rfc2544, quick for a temporary lab")
	fs.StringVar(&f.planFile, "plan", "", "YAML test plan `file` (see testdata/plans); flags override it")
	fs.StringVar(&f.out, "out", "", "output `folder` for journal.jsonl, results.json and reports (default rfc2544-results-TIME)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace the run files (journal, results, reports) of an earlier run in --out; without it an --out that exists and is not empty is refused")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in `folder` without repeating finished trials")
	fs.BoolVar(&f.json, "json", false, "write results as JSON to stdout and nothing else there")
	fs.BoolVar(&f.jsonStream, "json-stream", false, "write the run as it goes to stdout, one JSON object a line (iperf3's convention): start, an interval a second of each trial, each trial's end, the end with the results")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the effective plan and the checks, send nothing")
	fs.StringVar(&f.calibration, "calibration", "", "tester ceilings `file` from 'rfc2544 calibrate --json': trials at or above the ceiling that lose frames are tester-limited")
	f.labFlags = lab.AddFlags(fs)
	return f
}

// labSettingFlags are the flags lab.AddFlags registers: they shape a
// temporary lab and mean nothing otherwise.
var labSettingFlags = lab.FlagNames()

// resumeFlags may accompany --resume; everything else comes from the journal.
var resumeFlags = []string{"resume", "json", "json-stream", "quiet"}

func (f *runFlags) set() map[string]bool {
	m := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { m[fl.Name] = true })
	return m
}

// parseRunArgs parses args into flags; --help is reported as flag.ErrHelp.
func parseRunArgs(verb string, fixed []rfc2544.Test, args []string) (*runFlags, error) {
	f := newRunFlags(verb, fixed)
	if err := f.fs.Parse(rig.FixLabArg(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%s: %s; run 'rfc2544 %s --help' for the flags", verb, flagError(err), verb)
	}
	if f.fs.NArg() > 0 {
		return nil, usagef("%s: unexpected argument %s: every setting is a flag (e.g. --sizes 64,1518); run 'rfc2544 %s --help'", verb, quoteShort(f.fs.Arg(0)), verb)
	}
	return f, nil
}

// flagError rewrites the flag package's messages to name the flag the way
// users write it (--name).
func flagError(err error) string {
	s := err.Error()
	// The flag package quotes a bad value whole: quote at most ~100 bytes.
	const invalid = "invalid value "
	if rest, ok := strings.CutPrefix(s, invalid); ok {
		if q, qerr := strconv.QuotedPrefix(rest); qerr == nil {
			if v, uerr := strconv.Unquote(q); uerr == nil {
				s = invalid + quoteShort(v) + rest[len(q):]
			}
		}
	}
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: -"); ok && len(name) > maxQuote {
		s = "flag provided but not defined: -" + name[:maxQuote] + "..."
	}
	s = strings.Replace(s, "flag provided but not defined: -", "unknown flag --", 1)
	s = strings.Replace(s, "for flag -", "for --", 1)
	s = strings.Replace(s, "flag needs an argument: -", "flag needs a value: --", 1)
	return s
}

// runSetup is everything a run needs, checked, before anything is created.
type runSetup struct {
	agent     *rig.Agent // --agent: port B is a remote agent
	place     rig.Placement
	verb      string
	flags     *runFlags
	plan      rfc2544.Plan
	transport string // Raw, UDP, XDP or Sim (rig.Choose resolved auto)
	auto      bool   // --transport auto chose it (rig.Choice.Auto)
	why       string // how the transport was chosen
	lineNote  string // how the line rate was chosen, for the output
	linkGiven bool   // the plan file sets link_bps (even to 0)
	capBps    float64
	capNote   string
	ports     []rig.Port // explicit ports (not a lab)
	labName   string     // a named lab, or "" (see tempLab)
	tempLab   bool
	labCfg    lab.Config                // the temporary lab's settings
	ceilings  []trials.CalibrationPoint // from --calibration
	out       string
	resume    *rfc2544.JournalContents
	args      []string // the command line to journal (no --out, --resume)
}

func runVerb(ctx context.Context, verb string, fixed []rfc2544.Test, args []string, stdout, stderr io.Writer) error {
	f, err := parseRunArgs(verb, fixed, args)
	if errors.Is(err, flag.ErrHelp) {
		printRunHelp(stdout, verb, fixed)
		return nil
	}
	if err != nil {
		return err
	}
	sweep, err := sweepCounts(verb, f, stderr)
	if err != nil {
		return err
	}
	if sweep != nil {
		return runSweep(ctx, verb, fixed, f, sweep, args, stdout, stderr)
	}
	return runOne(ctx, verb, fixed, f, args, stdout, stderr)
}

// runOne runs the parsed command line f (args) once: no sweep.
func runOne(ctx context.Context, verb string, fixed []rfc2544.Test, f *runFlags, args []string, stdout, stderr io.Writer) error {
	if f.resume != "" {
		// Locked before the journal is read: one writer per journal.
		l, err := rig.LockFolder("--resume", f.resume)
		if err != nil {
			return err
		}
		defer l.Unlock()
	}
	s, err := setupRun(verb, fixed, f, args)
	if err != nil {
		return err
	}
	if f.dryRun {
		return dryRun(ctx, s, stdout)
	}
	if s.resume == nil {
		if err := os.MkdirAll(s.out, 0o755); err != nil {
			return usagef("--out %s: cannot create the folder: %w", s.out, err)
		}
		l, err := rig.LockFolder("--out", s.out)
		if err != nil {
			return err
		}
		defer l.Unlock()
		// Checked again under the lock: another run may have started
		// since setupRun looked.
		if err := rig.CheckOutFree(s.out, f.overwrite); err != nil {
			return err
		}
		if f.overwrite {
			if err := rig.ClearRunFiles(s.out); err != nil {
				return err
			}
		}
	}
	return execute(ctx, s, stdout, stderr)
}
