package reports

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// WriteTables writes the run's metadata and every table of res as text
// tables, the shape commercial testers print: throughput per frame size, the
// search log per frame size, latency, frame loss rate, back-to-back and
// system recovery. Tests without results are left out.
func WriteTables(w io.Writer, res *rfc2544.Results) error {
	return writeText(w, res, "")
}

// WriteTable writes the text table(s) of one Table of res (the search log is
// one table per frame size), without the run's metadata. It is an error to
// ask for a table the results do not hold.
func WriteTable(w io.Writer, res *rfc2544.Results, which Table) error {
	if _, err := ParseTable(string(which)); err != nil {
		return err
	}
	if len(buildTables(res, which)) == 0 {
		return fmt.Errorf("results hold no %s results: the run did not include that test", which)
	}
	return writeText(w, res, which)
}

func writeText(w io.Writer, res *rfc2544.Results, which Table) error {
	bw := bufio.NewWriter(w)
	if which == "" {
		fmt.Fprintln(bw, "RFC 2544 benchmark results")
		md := metadata(res)
		width := 0
		for _, kv := range md {
			width = max(width, len([]rune(kv[0])))
		}
		for _, kv := range md {
			fmt.Fprintf(bw, "  %-*s  %s\n", width+1, kv[0]+":", kv[1])
		}
	}
	tables := buildTables(res, which)
	if which == "" && len(tables) == 0 {
		fmt.Fprintln(bw, "\nNo test results.")
	}
	for i, t := range tables {
		if i > 0 || which == "" {
			fmt.Fprintln(bw)
		}
		if err := renderText(bw, t); err != nil {
			return fmt.Errorf("render %s table: %w", t.Name, err)
		}
	}
	return bw.Flush()
}

// renderText draws one table with tablewriter: title, table, notes.
func renderText(w io.Writer, t *table) error {
	fmt.Fprintln(w, t.Title)
	align := make([]tw.Align, len(t.Header))
	for i, r := range t.Right {
		align[i] = tw.AlignLeft
		if r {
			align[i] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	tbl.Header(toAny(t.Header)...)
	for _, r := range t.Rows {
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  "+strings.TrimSpace(n))
	}
	return nil
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}
