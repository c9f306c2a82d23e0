package reports

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rfc2544/rfc2544/rfc2544"
)

func TestGoldenTables(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteTables(&b, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "mtu1500.txt", b.Bytes())
}

func TestGoldenTablesWide(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteTablesWide(&b, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "mtu1500_wide.txt", b.Bytes())
	// The wide layout keeps every note in its cell.
	if !strings.Contains(b.String(), "│ fail: not sustained: stream 1: queue growing:") {
		t.Error("wide layout lost the note cells")
	}
}

// TestTablesFitWidth: no line of a report (the demo's report.txt is
// WriteTables of a run like these fixtures) or a comparison is wider than
// Width columns, and nothing is lost: every long note is a footnote.
func TestTablesFitWidth(t *testing.T) {
	a, b := loadFixture(t, fixture1500), loadFixture(t, fixture9000)
	outs := map[string]func(*bytes.Buffer) error{
		"report 1500": func(w *bytes.Buffer) error { return WriteTables(w, a) },
		"report 9000": func(w *bytes.Buffer) error { return WriteTables(w, b) },
		"comparison":  func(w *bytes.Buffer) error { return WriteComparison(w, Compare(a, b)) },
		"runs": func(w *bytes.Buffer) error {
			return WriteRuns(w, CompareRuns([]*rfc2544.Results{a, b}, []string{"a", "b"}))
		},
	}
	for name, write := range outs {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > Width {
				t.Errorf("%s line %d is %d columns wide (max %d):\n%s", name, i+1, n, Width, line)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteTables(&buf, a); err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(buf.String()), " ")
	for _, r := range a.Throughput {
		for _, tr := range r.Trials {
			if o := outcome(tr); !strings.Contains(flat, strings.Join(strings.Fields(o), " ")) {
				t.Errorf("outcome %q is not in the report", o)
			}
		}
	}
}

// TestSkippedEverywhere: a test skipped at every frame size is one line
// with its reason, not a table of dashes.
func TestSkippedEverywhere(t *testing.T) {
	res := &rfc2544.Results{BackToBack: []rfc2544.BackToBackResult{
		{FrameSize: 64, Skipped: "the throughput is tester-limited"},
		{FrameSize: 128, Skipped: "the throughput is tester-limited"},
	}}
	var b bytes.Buffer
	if err := WriteTable(&b, res, TableBackToBack, false); err != nil {
		t.Fatal(err)
	}
	want := "Back-to-back frames (RFC 2544 §26.4, RFC 9004)\n  Skipped at every frame size: the throughput is tester-limited\n"
	if got := b.String(); !strings.HasPrefix(got, want) || strings.Contains(got, "—") {
		t.Errorf("got\n%s\nwant it to start with\n%s", got, want)
	}
	res.BackToBack[1].Skipped = "no throughput at 128 bytes"
	b.Reset()
	if err := WriteTable(&b, res, TableBackToBack, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Skipped at every frame size: 64 B: the throughput is tester-limited; 128 B: no throughput at 128 bytes") {
		t.Errorf("two reasons:\n%s", b.String())
	}
}

func TestWriteWrapped(t *testing.T) {
	var b bytes.Buffer
	long := strings.Repeat("word ", 60) + strings.Repeat("x", 130)
	if err := writeWrapped(&b, "  [1] ", "      ", long); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, l := range lines[:len(lines)-1] {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("line %d: %d columns", i, utf8.RuneCountInString(l))
		}
	}
	if got := strings.Join(strings.Fields(b.String()), " "); got != "[1] "+strings.Join(strings.Fields(long), " ") {
		t.Errorf("words changed: %q", got)
	}
	if !strings.HasPrefix(lines[1], "      word") {
		t.Errorf("hanging indent: %q", lines[1])
	}
}
