package reports

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// Formats are the values of Choice.Format.
var Formats = []string{"table", "json", "csv", "html", "svg", "png"}

// Choice is what to render of a results file: a Format (one of Formats),
// optionally one Table and one Chart; ToDir when the outputs go into a
// folder (several files), else to one stream (one output); Wide keeps
// tables at full width.
type Choice struct {
	Format string
	Table  Table
	Chart  ChartKind
	ToDir  bool
	Wide   bool
}

// Output is one rendering: its file name in a folder, and its writer.
type Output struct {
	Name  string
	Write func(io.Writer) error
}

// ErrNoData is wrapped by Outputs when the results hold nothing the format
// renders.
var ErrNoData = errors.New("the results hold no data to render")

// Outputs decides what c renders of res. Without ToDir it is exactly one
// output, so a format that makes several needs a Table or a Chart to pick
// one. An error that is not ErrNoData is a choice these results cannot
// give; it names the command's option (--format, --test, --chart, --out)
// and the fix.
func Outputs(res *rfc2544.Results, c Choice) ([]Output, error) {
	format, table := c.Format, c.Table
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("--format %q: unknown; want one of %s", format, strings.Join(Formats, ", "))
	}
	if table != "" && !HasTable(res, table) {
		return nil, fmt.Errorf("--test %s: the results hold no %s results (the run's tests: %s)", table, table, presentTables(res))
	}
	one := func(name string, write func(io.Writer) error) ([]Output, error) {
		return []Output{{name, write}}, nil
	}
	switch format {
	case "table":
		switch {
		case table != "":
			return one(string(table)+".txt", func(w io.Writer) error { return WriteTable(w, res, table, c.Wide) })
		case c.Wide:
			return one("report.txt", func(w io.Writer) error { return WriteTablesWide(w, res) })
		}
		return one("report.txt", func(w io.Writer) error { return WriteTables(w, res) })
	case "json":
		sub := OnlyTable(res, table)
		return one("results.json", func(w io.Writer) error { return WriteJSON(w, sub) })
	case "html":
		sub := OnlyTable(res, table)
		return one("report.html", func(w io.Writer) error { return WriteHTML(w, sub) })
	case "csv":
		tables := []Table{table}
		if table == "" {
			if !c.ToDir {
				return nil, fmt.Errorf("csv on stdout is one table: add --test (%s), or --out DIR for one file per table", presentTables(res))
			}
			tables = TablesIn(res)
		}
		var outs []Output
		for _, t := range tables {
			outs = append(outs, Output{string(t) + ".csv", func(w io.Writer) error { return WriteCSV(w, res, t) }})
		}
		if len(outs) == 0 {
			return nil, fmt.Errorf("csv: %w", ErrNoData)
		}
		return outs, nil
	}
	// svg, png
	kinds := AvailableCharts(res)
	if table != "" {
		if kinds = TableCharts(res, table); len(kinds) == 0 {
			return nil, fmt.Errorf("--test %s has no chart; charts exist for throughput, latency (and latency_cdf) and frame_loss", table)
		}
	}
	if c.Chart != "" {
		if !slices.Contains(AvailableCharts(res), c.Chart) {
			return nil, fmt.Errorf("--chart %s: the results hold no data for it (available: %s)", c.Chart, joinNames(AvailableCharts(res)))
		}
		kinds = []ChartKind{c.Chart}
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("charts: %w", ErrNoData)
	}
	if !c.ToDir && len(kinds) > 1 {
		return nil, fmt.Errorf("%s on stdout is one chart: add --chart (%s), or --out DIR for every chart", format, joinNames(kinds))
	}
	var outs []Output
	for _, k := range kinds {
		outs = append(outs, Output{string(k) + "." + format, func(w io.Writer) error { return WriteChart(w, res, k, ImageFormat(format)) }})
	}
	return outs, nil
}

// presentTables names the tables res holds, for an error ("none").
func presentTables(res *rfc2544.Results) string {
	if t := TablesIn(res); len(t) > 0 {
		return joinNames(t)
	}
	return "none"
}
