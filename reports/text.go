package reports

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// WriteTables writes the run's metadata and every table of res as text
// tables, the shape commercial testers print: throughput per frame size, the
// search log per frame size, latency, frame loss rate, back-to-back and
// system recovery. Tests without results are left out. No line is wider
// than Width columns: long notes are numbered footnotes under their table.
func WriteTables(w io.Writer, res *rfc2544.Results) error {
	return writeText(w, res, "", false)
}

// WriteTablesWide is WriteTables with every note in its cell and every
// column shown, however wide the lines grow.
func WriteTablesWide(w io.Writer, res *rfc2544.Results) error {
	return writeText(w, res, "", true)
}

// WriteTable writes the text table(s) of one Table of res (the search log is
// one table per frame size), without the run's metadata. It is an error to
// ask for a table the results do not hold. wide is WriteTablesWide's layout.
func WriteTable(w io.Writer, res *rfc2544.Results, which Table, wide bool) error {
	if _, err := ParseTable(string(which)); err != nil {
		return err
	}
	if len(buildTables(res, which)) == 0 {
		return fmt.Errorf("results hold no %s results: the run did not include that test", which)
	}
	return writeText(w, res, which, wide)
}

func writeText(w io.Writer, res *rfc2544.Results, which Table, wide bool) error {
	bw := bufio.NewWriter(w)
	if which == "" {
		fmt.Fprintln(bw, "RFC 2544 benchmark results")
		md := metadata(res)
		width := 0
		for _, kv := range md {
			width = max(width, len([]rune(kv[0])))
		}
		for _, kv := range md {
			if wide {
				fmt.Fprintf(bw, "  %-*s  %s\n", width+1, escapeControl(kv[0])+":", escapeControl(kv[1]))
				continue
			}
			label := fmt.Sprintf("  %-*s  ", width+1, escapeControl(kv[0])+":")
			if err := writeWrapped(bw, label, strings.Repeat(" ", utf8.RuneCountInString(label)), escapeControl(kv[1])); err != nil {
				return err
			}
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
		render := renderNarrow
		if wide {
			render = renderText
		}
		if err := render(bw, t); err != nil {
			return fmt.Errorf("render %s table: %w", t.Name, err)
		}
	}
	return bw.Flush()
}

// renderText draws one table with tablewriter: title, table, notes.
func renderText(w io.Writer, t *table) error {
	fmt.Fprintln(w, escapeControl(t.Title))
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
	tbl.Header(toAny(t.Header)...) // toAny escapes
	for _, r := range t.Rows {
		if err := tbl.Append(toAny(r)...); err != nil {
			return err
		}
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  "+escapeControl(strings.TrimSpace(n)))
	}
	return nil
}

// toAny converts table cells for tablewriter, escaping control characters.
func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = escapeControl(v)
	}
	return a
}

// escapeControl shows the control characters of s (C0, DEL, C1: the ANSI
// and OSC escapes a results file could carry to a terminal) and invalid
// UTF-8 as Go escapes, \x1b, \n, \u009b or \xff, so text output never
// drives the terminal. Other text is left as it is.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			q := strconv.QuoteRune(r) // '\x1b', '\n', '\u009b'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
