package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
)

const compareHelp = `Usage: rfc2544 compare A B [C ...] [--test NAME] [--format table|json] [--chart FILE.svg|FILE.png]

rfc2544 compare puts two results files side by side: per test, frame size and
metric, the value in A and in B, the delta (B − A) and the ratio (B / A).
Frame sizes only one run has are shown as "— (only in B)"; tests only one
run has are named in a note; tester-limited values are lower bounds, and
deltas that use them are marked "(bound)".

With more than two files, compare shows the throughput of every run per
frame size (one column per run) and the chart draws one line per run, e.g.
a firewall at 0, 100, 1000 and 10000 rules (see run --fw-rules-sweep).

Metrics: throughput (fps, Mbit/s L1, % of line rate), latency at the
throughput rate (mean, P99, max), frame loss at each load both runs tried,
back-to-back (average burst, corrected buffer time), system recovery time.

Examples:
  # the 1500 vs 9000 MTU question
  rfc2544 compare mtu1500/results.json mtu9000/results.json
  # firmware A vs B, throughput only, with an overlay chart
  rfc2544 compare fwA/results.json fwB/results.json --test throughput --chart fw.svg
  # throughput against rule count, one line per run
  rfc2544 compare fw-rules-0/results.json fw-rules-100/results.json fw-rules-1000/results.json --chart fw.png
  # for a pipeline
  rfc2544 compare a.json b.json --format json > diff.json

Exit codes: 0 ok, 1 a file cannot be read (missing, corrupt, newer schema),
2 usage error.

Flags:
`

func compareVerb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	test := fs.String("test", "", "only this `test`: throughput, latency, frame_loss, back_to_back, system_recovery")
	format := fs.String("format", "table", "output `format`: table or json")
	chart := fs.String("chart", "", "also write the throughput overlay chart to `file` (.svg or .png)")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printVerbHelp(stdout, compareHelp, fs)
		return nil
	}
	if err != nil {
		return usagef("compare: %s; run 'rfc2544 compare --help' for the flags", flagError(err))
	}
	if len(pos) < 2 {
		return usagef("compare: want two or more results files (A B ...), got %d%s: rfc2544 compare a/results.json b/results.json",
			len(pos), listArgs(pos))
	}
	if *format != "table" && *format != "json" {
		return usagef("compare: --format %q: unknown; want table or json", *format)
	}
	var only rfc2544.Test
	if *test != "" {
		t, err := reports.ParseTable(*test)
		if err != nil || t == reports.TableSearchLog || t == reports.TableProbe {
			return usagef("compare: --test %q: unknown; want one of throughput, latency, frame_loss, back_to_back, system_recovery", *test)
		}
		only = rfc2544.Test(t)
	}
	var chartFormat reports.ImageFormat
	if *chart != "" {
		if chartFormat, err = reports.ParseImageFormat(filepath.Ext(*chart)); err != nil {
			return usagef("compare: --chart %q: the file name must end in .svg or .png", *chart)
		}
	}
	if len(pos) > 2 {
		if only != "" && only != rfc2544.TestThroughput {
			return usagef("compare: --test %s: with more than two runs compare shows throughput only", only)
		}
		return compareRuns(pos, *format, *chart, chartFormat, stdout, stderr)
	}
	a, err := reports.ReadResultsFile(pos[0])
	if err != nil {
		return fmt.Errorf("compare: A: %w", err)
	}
	b, err := reports.ReadResultsFile(pos[1])
	if err != nil {
		return fmt.Errorf("compare: B: %w", err)
	}
	c := reports.Compare(a, b)
	c.A.Label, c.B.Label = reports.PairLabels(pos[0], pos[1])
	if only != "" {
		var ok bool
		if c, ok = c.OnlyTest(only); !ok {
			return usagef("compare: --test %s: the two runs have no %s results in common", only, only)
		}
	}
	if *chart != "" {
		write := func(w io.Writer) error { return reports.WriteComparisonChart(w, c, chartFormat) }
		if err := writeFilesAtomic(filepath.Dir(*chart), []outputFile{{Name: filepath.Base(*chart), Write: write}}); err != nil {
			return fmt.Errorf("compare: chart: %w", err)
		}
	}
	if *format == "json" {
		if err := reports.WriteComparisonJSON(stdout, c); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	} else if err := reports.WriteComparison(stdout, c); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if *chart != "" {
		fmt.Fprintln(stderr, "wrote", *chart)
	}
	return nil
}

// compareRuns is compare with more than two runs: their throughput side by
// side (one column per run) and, with chart, one line per run.
func compareRuns(files []string, format, chart string, chartFormat reports.ImageFormat, stdout, stderr io.Writer) error {
	var runs []*rfc2544.Results
	for i, f := range files {
		r, err := reports.ReadResultsFile(f)
		if err != nil {
			return fmt.Errorf("compare: run %d: %w", i+1, err)
		}
		runs = append(runs, r)
	}
	rs := reports.CompareRuns(runs, reports.RunLabels(files))
	if chart != "" {
		if err := writeReportFile(chart, func(w io.Writer) error { return reports.WriteRunsChart(w, rs, chartFormat) }); err != nil {
			return fmt.Errorf("compare: chart: %w", err)
		}
	}
	if format == "json" {
		if err := reports.WriteRunsJSON(stdout, rs); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	} else if err := reports.WriteRuns(stdout, rs); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if chart != "" {
		fmt.Fprintln(stderr, "wrote", chart)
	}
	return nil
}

func listArgs(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return " (" + strings.Join(a, " ") + ")"
}
