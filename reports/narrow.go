package reports

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Width is the widest line of a text report in columns, as a terminal and a
// certification report page take it. WriteTablesWide keeps the wide layout.
const Width = 120

// noteCell is the longest note, outcome or reason kept in its cell; a longer
// one becomes a numbered footnote under the table.
const noteCell = 24

// renderNarrow draws one table within Width columns: no vertical rules,
// headers "Name (unit)" on two lines, long text cells as footnotes, and
// the columns marked optional left out (and named under the table) while
// it is still too wide. A test skipped at every frame size is one line.
func renderNarrow(w io.Writer, t *table) error {
	fmt.Fprintln(w, escapeControl(t.Title))
	if line, ok := allSkipped(t); ok {
		return writeWrapped(w, "  ", "  ", line)
	}
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = escapeControl(c)
		}
	}
	var notes []string // footnotes, numbered from 1
	seen := map[string]int{}
	for _, r := range rows {
		for j, c := range r {
			if t.Right[j] || utf8.RuneCountInString(c) <= noteCell {
				continue
			}
			n, ok := seen[c]
			if !ok {
				notes = append(notes, c)
				n = len(notes)
				seen[c] = n
			}
			r[j] = noteHead(c) + "[" + strconv.Itoa(n) + "]"
		}
	}
	cols := make([]int, len(t.Header)) // the columns shown
	for i := range cols {
		cols[i] = i
	}
	var dropped []string
	for narrowWidth(t, rows, cols) > Width {
		i := slices.IndexFunc(cols, func(c int) bool { return t.Optional != nil && t.Optional[c] })
		if i < 0 {
			break
		}
		dropped = append(dropped, t.Header[cols[i]])
		cols = slices.Delete(cols, i, i+1)
	}
	head := make([][2]string, len(cols))
	widths := make([]int, len(cols))
	for k, c := range cols {
		head[k] = splitHeader(escapeControl(t.Header[c]))
		widths[k] = max(utf8.RuneCountInString(head[k][0]), utf8.RuneCountInString(head[k][1]))
		for _, r := range rows {
			widths[k] = max(widths[k], utf8.RuneCountInString(r[c]))
		}
	}
	line := func(cell func(k int) string) {
		var b strings.Builder
		for k, c := range cols {
			if k > 0 {
				b.WriteString("  ")
			}
			s := cell(k)
			pad := strings.Repeat(" ", widths[k]-utf8.RuneCountInString(s))
			if t.Right[c] {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	if slices.ContainsFunc(head, func(h [2]string) bool { return h[1] != "" }) {
		line(func(k int) string { return head[k][0] })
		line(func(k int) string { return head[k][1] })
	} else {
		line(func(k int) string { return head[k][0] })
	}
	line(func(k int) string { return strings.Repeat("─", widths[k]) })
	for _, r := range rows {
		line(func(k int) string { return r[cols[k]] })
	}
	for i, n := range notes {
		if err := writeWrapped(w, fmt.Sprintf("  [%d] ", i+1), "      ", n); err != nil {
			return err
		}
	}
	if len(dropped) > 0 {
		names := make([]string, len(dropped))
		for i, d := range dropped {
			names[i] = strings.ReplaceAll(d, "\n", " ")
		}
		if err := writeWrapped(w, "  ", "  ", "Not shown to fit "+strconv.Itoa(Width)+" columns (--wide shows them): "+strings.Join(names, ", ")+"."); err != nil {
			return err
		}
	}
	for _, n := range t.Notes {
		if err := writeWrapped(w, "  ", "  ", escapeControl(strings.TrimSpace(n))); err != nil {
			return err
		}
	}
	return nil
}

// narrowWidth is the width of the table's widest line with columns cols.
func narrowWidth(t *table, rows [][]string, cols []int) int {
	total := 2 * (len(cols) - 1)
	for _, c := range cols {
		h := splitHeader(t.Header[c])
		wd := max(utf8.RuneCountInString(h[0]), utf8.RuneCountInString(h[1]))
		for _, r := range rows {
			wd = max(wd, utf8.RuneCountInString(r[c]))
		}
		total += wd
	}
	return total
}

// splitHeader puts a header's unit on a second line: "Offered (fps)" is
// "Offered", "(fps)".
func splitHeader(h string) [2]string {
	if i := strings.LastIndex(h, " ("); i > 0 && strings.HasSuffix(h, ")") {
		return [2]string{h[:i], h[i+1:]}
	}
	return [2]string{h, ""}
}

// noteHead is what stays in the cell of a note moved to a footnote: its
// leading word when the note reads "fail: ..." or "skipped: ...".
func noteHead(s string) string {
	if i := strings.Index(s, ":"); i > 0 && i <= 16 && !strings.Contains(s[:i], " ") {
		return s[:i] + " "
	}
	return ""
}

// allSkipped reports whether every row of t is a skipped test (the last
// cell "skipped: reason"), and if so the line that replaces the table.
func allSkipped(t *table) (string, bool) {
	if len(t.Rows) == 0 {
		return "", false
	}
	var reasons []string
	sizes := map[string][]string{}
	for _, r := range t.Rows {
		why, ok := strings.CutPrefix(r[len(r)-1], "skipped: ")
		if !ok {
			return "", false
		}
		if _, ok := sizes[why]; !ok {
			reasons = append(reasons, why)
		}
		sizes[why] = append(sizes[why], r[0])
	}
	if len(reasons) == 1 {
		return "Skipped at every frame size: " + escapeControl(reasons[0]), true
	}
	parts := make([]string, len(reasons))
	for i, why := range reasons {
		parts[i] = strings.Join(sizes[why], ", ") + " B: " + escapeControl(why)
	}
	return "Skipped at every frame size: " + strings.Join(parts, "; "), true
}

// writeWrapped writes s in lines of at most Width columns, the first after
// first and the rest after indent, breaking at spaces (a word longer than a
// line is left whole).
func writeWrapped(w io.Writer, first, indent, s string) error {
	prefix := first
	for {
		room := Width - utf8.RuneCountInString(prefix)
		if utf8.RuneCountInString(s) <= room {
			_, err := fmt.Fprintln(w, prefix+s)
			return err
		}
		cut := -1
		n := 0
		for i, r := range s {
			if n > room {
				break
			}
			if r == ' ' {
				cut = i
			}
			n++
		}
		if cut <= 0 {
			cut = strings.IndexByte(s, ' ')
			if cut < 0 {
				_, err := fmt.Fprintln(w, prefix+s)
				return err
			}
		}
		if _, err := fmt.Fprintln(w, prefix+s[:cut]); err != nil {
			return err
		}
		s = strings.TrimLeft(s[cut:], " ")
		prefix = indent
	}
}
