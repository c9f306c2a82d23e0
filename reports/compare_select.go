package reports

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// OnlyTest returns c reduced to the rows of test t, keeping the notes about
// t and about the runs as a whole (dropping "only in" notes of other
// tests); ok is false when the two runs have no t results in common.
func (c Comparison) OnlyTest(t rfc2544.Test) (sub Comparison, ok bool) {
	sub = c
	sub.Rows, sub.Notes = nil, nil
	for _, r := range c.Rows {
		if r.Test == t {
			sub.Rows = append(sub.Rows, r)
		}
	}
	for _, n := range c.Notes {
		if !strings.Contains(n, ": only in ") || strings.HasPrefix(n, string(t)+":") {
			sub.Notes = append(sub.Notes, n)
		}
	}
	return sub, len(sub.Rows) > 0
}

// WriteComparisonJSON writes c as indented JSON, text as written (no HTML
// escaping: "A->B").
func WriteComparisonJSON(w io.Writer, c Comparison) error { return writeIndented(w, c) }

// WriteRunsJSON writes rs as indented JSON, text as written.
func WriteRunsJSON(w io.Writer, rs Runs) error { return writeIndented(w, rs) }

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
