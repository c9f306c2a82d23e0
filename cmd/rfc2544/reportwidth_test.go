package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rfc2544/rfc2544/reports"
)

// TestReportFitsWidth: the main job's report (all tests, the seven sizes
// plus a size the path cannot carry, bidirectional), here against the
// simulated DUT, has no line wider than reports.Width columns, on stdout
// and in report.txt; its JSON files are not HTML-escaped.
func TestReportFitsWidth(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	stdout, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--profile", "quick", "--bidir",
		"--sizes", "64,128,256,512,1024,1280,1518,1522", "--sim-mtu", "1500", "--quiet", "--out", out)
	if err != nil && exitCode(err, new(strings.Builder)) != exitTesterLimited {
		t.Fatalf("run: %v", err)
	}
	file, err := os.ReadFile(filepath.Join(out, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The JSON files read as written: "A->B", not "A-\u003eB".
	for _, name := range []string{"results.json", journalName} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `\u003e`) || !strings.Contains(string(b), `"A->B"`) {
			t.Errorf("%s is HTML-escaped or lacks \"A->B\"", name)
		}
	}
	for name, text := range map[string]string{"stdout": stdout, "report.txt": string(file)} {
		if !strings.Contains(text, "Throughput (RFC 2544 §26.1)") {
			t.Errorf("%s has no throughput table", name)
		}
		for i, l := range strings.Split(text, "\n") {
			if n := utf8.RuneCountInString(l); n > reports.Width {
				t.Errorf("%s line %d is %d columns (max %d): %s", name, i+1, n, reports.Width, l)
			}
		}
	}
}
