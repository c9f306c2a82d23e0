package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rfc2544/rfc2544/reports"
)

const reportHelp = `Usage: rfc2544 report RESULTS [--format table|json|csv|html|svg|png] [--out DIR] [--test NAME] [--chart NAME]

rfc2544 report re-renders the results file of a run (results.json) without
re-running anything. Without --out it writes to stdout; with --out it writes
files into DIR (created if needed) and lists them.

Formats:
  table  text tables: throughput, search log per frame size, latency, frame
         loss, back-to-back, system recovery, path probe (report.txt)
  json   the results file itself, re-encoded in this rfc2544's schema
         (results.json); with --test, only that test's results
  csv    one table as CSV (stdout: needs --test); with --out, one file per
         table (throughput.csv, search_log.csv, ...)
  html   one self-contained page with every table and chart (report.html)
  svg    charts (stdout: one chart, named by --chart or implied by --test);
  png    with --out, every chart (throughput.svg, latency.svg, ...)

Tests (--test): throughput, search_log, latency, frame_loss, back_to_back,
system_recovery, probe ("-" may stand for "_"; b2b and recovery work too).
Charts (--chart): throughput, latency, frame_loss, latency_cdf, and other
forms of them: latency_percentile (latency by percentile, 50 to 99.99 %),
throughput_percent (in % of line rate), frame_loss_log (log loss axis).

Examples:
  rfc2544 report dut1/results.json
  rfc2544 report dut1/results.json --format html --out dut1
  rfc2544 report dut1/results.json --format csv --test search-log > search.csv
  rfc2544 report dut1/results.json --format png --chart throughput > tput.png
  rfc2544 report dut1/results.json --format svg --out charts

Exit codes: 0 ok, 1 the file cannot be read (missing, corrupt, newer
schema), 2 usage error.

Flags:
`

type reportFlags struct {
	fs                      *flag.FlagSet
	format, out, test, kind string
	wide                    bool
}

func newReportFlags() *reportFlags {
	f := &reportFlags{fs: flag.NewFlagSet("report", flag.ContinueOnError)}
	f.fs.SetOutput(io.Discard)
	f.fs.StringVar(&f.format, "format", "table", "output `format`: "+strings.Join(reports.Formats, ", "))
	f.fs.StringVar(&f.out, "out", "", "write files into `folder` instead of stdout")
	f.fs.StringVar(&f.test, "test", "", "only this test's `table` (or charts)")
	f.fs.StringVar(&f.kind, "chart", "", "svg/png: only this `chart`: throughput, latency, frame_loss, latency_cdf, latency_percentile, throughput_percent, frame_loss_log")
	f.fs.BoolVar(&f.wide, "wide", false, "table: keep every note in its cell and every column, however wide (default: lines of at most 120 columns, long notes as numbered footnotes)")
	return f
}

func reportVerb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newReportFlags()
	pos, err := parseInterspersed(f.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printVerbHelp(stdout, reportHelp, f.fs)
		return nil
	}
	if err != nil {
		return usagef("report: %s; run 'rfc2544 report --help' for the flags", flagError(err))
	}
	switch len(pos) {
	case 0:
		return usagef("report: no results file given: rfc2544 report RESULTS.json [--format ...]")
	case 1:
	default:
		return usagef("report: one results file at a time, got %d (%s); to put two runs side by side use 'rfc2544 compare A B'",
			len(pos), strings.Join(pos, " "))
	}
	choice, err := reports.ParseChoice(f.format, f.test, f.kind)
	if err != nil {
		return usagef("report: %w", err)
	}
	choice.ToDir, choice.Wide = f.out != "", f.wide
	res, err := reports.ReadResultsFile(pos[0])
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	outs, err := reports.Outputs(res, choice)
	if errors.Is(err, reports.ErrNoData) {
		return fmt.Errorf("report: %w", err)
	}
	if err != nil {
		return usagef("report: %w", err)
	}
	if f.out == "" {
		return outs[0].Write(stdout)
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("report: create output folder: %w", err)
	}
	files := make([]outputFile, len(outs))
	for i, o := range outs {
		files[i] = outputFile{Name: o.Name, Write: o.Write}
	}
	if err := writeFilesAtomic(f.out, files); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for _, o := range outs {
		fmt.Fprintln(stdout, "wrote", filepath.Join(f.out, o.Name))
	}
	return nil
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments ("report results.json --format html") and returns
// the positional ones. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// printVerbHelp writes a verb's help text and then its flags.
func printVerbHelp(w io.Writer, help string, fs *flag.FlagSet) {
	fmt.Fprint(w, help)
	printFlags(w, fs)
}
