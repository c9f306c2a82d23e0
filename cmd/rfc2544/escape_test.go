package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/reports"
)

// TestReportEscapesControl: ANSI and OSC escapes in a results file (a DUT
// description, a reason) are shown escaped by 'report' in its text tables,
// never sent raw to the terminal; the HTML report escapes markup (issue 17
// item 12).
func TestReportEscapesControl(t *testing.T) {
	res, err := reports.ReadResultsFile(fixture1500)
	if err != nil {
		t.Fatal(err)
	}
	const evil = "dut\x1b]0;owned\x07\x1b[2J\u009b31m\x7f<script>x</script>"
	res.DUT.Description = evil
	if len(res.Probes) == 0 {
		t.Fatal("fixture has no probe results")
	}
	res.Probes[0].Reason = "reason\x1b[31m\nsecond line"
	path := filepath.Join(t.TempDir(), "results.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := reports.WriteJSON(f, res); err != nil {
		t.Fatal(err)
	}
	f.Close()

	stdout, _, err := runCLI(t, context.Background(), "report", path)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexAny(stdout, "\x1b\x07\u009b\x7f"); i >= 0 {
		t.Errorf("report wrote a control character raw at byte %d: %q", i, stdout[max(0, i-20):min(len(stdout), i+20)])
	}
	for _, want := range []string{`dut\x1b]0;owned\a\x1b[2J\u009b31m\x7f<script>`, `reason\x1b[31m\nsecond line`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks the escaped %s:\n%s", want, stdout)
		}
	}
	html, _, err := runCLI(t, context.Background(), "report", path, "--format", "html")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, "<script>x</script>") || !strings.Contains(html, "&lt;script&gt;x&lt;/script&gt;") {
		t.Errorf("the HTML report does not escape markup from the results file")
	}
}
