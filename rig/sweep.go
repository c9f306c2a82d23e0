package rig

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// SweepInput is how a firewall rule sweep is given: --fw-rules-sweep
// (lab.Flags.Sweep), --fw-rules, the plan file's lab_sweep.fw_rules, and
// --lab.
type SweepInput struct {
	Counts   []int // --fw-rules-sweep, checked; nil when not given
	FWRules  bool  // --fw-rules N was given
	PlanFile string
	Lab      bool   // --lab was given
	LabName  string // --lab NAME; "" for a temporary lab
}

// SweepCounts returns the firewall rule counts a run sweeps (RunSweep):
// --fw-rules-sweep, else the plan file's lab_sweep.fw_rules; nil for a
// single run. Every check is made here, before any traffic. A flag wins
// over the plan file, as everywhere: --fw-rules-sweep replaces the plan's
// counts and --fw-rules N makes one run at N rules, each with a note on
// log. A plan's sweep needs a temporary lab (each count gets its own).
func SweepCounts(in SweepInput, log io.Writer) ([]int, error) {
	if in.PlanFile == "" {
		return in.Counts, nil
	}
	p, _, err := rfc2544.LoadPlan(in.PlanFile, rfc2544.Plan{})
	if err != nil {
		return nil, PlanFileError(in.PlanFile, err)
	}
	planned := p.LabSweep.FWRules
	if planned == nil {
		return in.Counts, nil
	}
	if err := lab.ValidateSweep(planned); err != nil {
		return nil, inputf("--plan %s: %w", in.PlanFile, &rfc2544.PlanError{Field: "lab_sweep.fw_rules", Value: planned, Fix: err.Error()})
	}
	switch {
	case in.Counts != nil:
		fmt.Fprintf(log, "sweep: --fw-rules-sweep overrides the plan's lab_sweep.fw_rules %v\n", planned)
		return in.Counts, nil
	case in.FWRules:
		fmt.Fprintf(log, "sweep: --fw-rules overrides the plan's lab_sweep.fw_rules %v: one run\n", planned)
		return nil, nil
	}
	if !in.Lab || in.LabName != "" {
		return nil, inputf("--plan %s: lab_sweep runs each rule count on a temporary lab of its own: add --lab (without a name), or remove lab_sweep from the plan", in.PlanFile)
	}
	return planned, nil
}

// SweepConfig is a firewall rule sweep (RunSweep).
type SweepConfig struct {
	Out    string // the sweep's folder; "" for rfc2544-sweep-TIME
	Counts []int  // the rule counts (SweepCounts)
	// Args is the command line of the run swept: each run gets it without
	// --fw-rules-sweep and --out, and with --fw-rules N --out OUT/fw-rules-N.
	Args   []string
	DryRun bool // each run prints its plan; nothing is compared
	// Run runs one rule count's command line.
	Run func(ctx context.Context, args []string) error
	// Carry reports a run's error after which the sweep goes on (e.g. a
	// tester-limited result); the last such error is RunSweep's.
	Carry func(error) bool
	// Stdout gets the comparison table, Log the progress.
	Stdout, Log io.Writer
	// AtExit registers the removal of half-written files (fileio.WriteFiles).
	AtExit func(func()) func()
}

// RunSweep runs one run per rule count, each on its own temporary lab with
// --fw-rules N and its results in OUT/fw-rules-N, then compares the runs:
// OUT/compare.txt, compare.json and the chart compare-throughput.svg and
// .png (one line per rule count), and the table on Stdout. An error that
// Carry does not accept stops the sweep.
func RunSweep(ctx context.Context, cfg SweepConfig) error {
	out := cfg.Out
	if out == "" {
		out = "rfc2544-sweep-" + time.Now().UTC().Format("20060102T150405Z")
	}
	base := stripFlags(cfg.Args, "fw-rules-sweep", "out")
	var files []string
	var carried error
	for _, n := range cfg.Counts {
		dir := filepath.Join(out, fmt.Sprintf("fw-rules-%d", n))
		fmt.Fprintf(cfg.Log, "sweep: %d firewall rules -> %s\n", n, dir)
		err := cfg.Run(ctx, append(slices.Clone(base), "--fw-rules", strconv.Itoa(n), "--out", dir))
		switch {
		case err == nil:
		case cfg.Carry != nil && cfg.Carry(err):
			carried = err
		default:
			return fmt.Errorf("sweep at %d rules: %w", n, err)
		}
		files = append(files, filepath.Join(dir, "results.json"))
	}
	if cfg.DryRun {
		fmt.Fprintf(cfg.Log, "sweep: a dry run; the %d runs above would be compared in %s\n", len(cfg.Counts), out)
		return carried
	}
	rs, err := compareSweep(out, files, cfg.Counts, cfg.AtExit)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	fmt.Fprintln(cfg.Stdout)
	if err := reports.WriteRuns(cfg.Stdout, rs); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Log, "sweep: comparison in %s (compare.txt, compare.json, compare-throughput.svg/.png)\n", out)
	return carried
}

// compareSweep compares the results files of a sweep's runs into out.
func compareSweep(out string, files []string, counts []int, atExit func(func()) func()) (reports.Runs, error) {
	var runs []*rfc2544.Results
	var labels []string
	for i, f := range files {
		r, err := reports.ReadResultsFile(f)
		if err != nil {
			return reports.Runs{}, err
		}
		runs, labels = append(runs, r), append(labels, fmt.Sprintf("%d rules", counts[i]))
	}
	rs := reports.CompareRuns(runs, labels)
	for _, w := range []fileio.File{
		{Name: "compare.txt", Write: func(w io.Writer) error { return reports.WriteRuns(w, rs) }},
		{Name: "compare.json", Write: func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rs)
		}},
		{Name: "compare-throughput.svg", Write: func(w io.Writer) error { return reports.WriteRunsChart(w, rs, reports.SVG) }},
		{Name: "compare-throughput.png", Write: func(w io.Writer) error { return reports.WriteRunsChart(w, rs, reports.PNG) }},
	} {
		// One file at a time, as each is complete in itself.
		if err := fileio.WriteFiles(out, []fileio.File{w}, atExit); err != nil {
			return reports.Runs{}, err
		}
	}
	return rs, nil
}

// stripFlags returns args without the named flags and their values
// ("--name v", "--name=v", "-name v").
func stripFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(names, name) {
			if !hasValue {
				i++ // its value
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
