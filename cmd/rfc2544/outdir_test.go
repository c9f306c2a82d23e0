package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/reports"
)

var simQuick = []string{"run", "--transport", "sim", "--profile", "quick", "--sizes", "64", "--tests", "throughput,latency", "--quiet"}

// snapshot reads every file of dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

// TestFailedResumeKeepsResults: a resume that fails on a journal/plan
// mismatch leaves results.json and the reports of the interrupted run as
// they were, and leaves no temporary file behind (issue 17 item 7).
func TestFailedResumeKeepsResults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out)...); err != nil {
		t.Fatal(err)
	}
	lines := readJournalLines(t, out)
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[3]), &rec); err != nil {
		t.Fatal(err)
	}
	rec["result"].(map[string]any)["spec"].(map[string]any)["rate_fps"] = 12345.0
	b, _ := json.Marshal(rec)
	lines[3] = string(b)
	if err := os.WriteFile(filepath.Join(out, journalName), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, out)
	_, stderr, err := runCLI(t, context.Background(), "run", "--resume", out)
	if err == nil || !strings.Contains(err.Error(), "trial 3 of the journal") {
		t.Fatalf("got %v, want a resume mismatch naming trial 3", err)
	}
	if !strings.Contains(stderr, "left as they were") {
		t.Errorf("stderr does not say the results were kept:\n%s", stderr)
	}
	after := snapshot(t, out)
	for name, want := range before {
		if after[name] != want {
			t.Errorf("%s changed by the failed resume", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("the failed resume left %s behind", name)
		}
	}
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil || len(res.Latency) == 0 {
		t.Errorf("results after the failed resume: %v, %d latency results", err, len(res.Latency))
	}
}

// TestOutNotEmpty: an --out that holds files but no journal is refused
// unless --overwrite, which replaces the run files (issue 17 item 8).
func TestOutNotEmpty(t *testing.T) {
	out := t.TempDir()
	old := `{"schema":1,"note":"an earlier run"}`
	os.WriteFile(filepath.Join(out, "results.json"), []byte(old), 0o644)
	orig := openTester
	opens := forbidTraffic(t)
	_, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out)...)
	if got := exitCode(err, io.Discard); got != exitUsage || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("got exit %d (%v), want a usage error naming --overwrite", got, err)
	}
	if *opens != 0 {
		t.Errorf("the tester was opened for a refused --out")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "results.json")); string(b) != old {
		t.Errorf("results.json was touched")
	}
	openTester = orig
	if _, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out, "--overwrite")...); err != nil {
		t.Fatalf("--overwrite: %v", err)
	}
	if _, err := reports.ReadResultsFile(filepath.Join(out, "results.json")); err != nil {
		t.Errorf("results after --overwrite: %v", err)
	}
	// A folder with a run in it: --overwrite starts a new journal.
	first := readJournalLines(t, out)[0]
	if _, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out)...); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("a second run into a run's folder: %v, want an error offering --resume", err)
	}
	if _, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out, "--overwrite")...); err != nil {
		t.Fatalf("second --overwrite: %v", err)
	}
	if readJournalLines(t, out)[0] == first {
		t.Errorf("--overwrite kept the old journal header")
	}
}

// TestOutputModes: results, reports and journal are all 0644, whatever
// the umask lets through (issue 17 item 12).
func TestOutputModes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, _, err := runCLI(t, context.Background(), append(simQuick, "--out", out)...); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(t.TempDir(), "rep")
	if _, _, err := runCLI(t, context.Background(), "report", filepath.Join(out, "results.json"), "--format", "csv", "--out", rep); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{out, rep} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != 0o644 {
				t.Errorf("%s: mode %v, want 0644", filepath.Join(dir, e.Name()), got)
			}
		}
	}
}
