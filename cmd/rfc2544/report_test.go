package main

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fixture results files and the reports package's golden renderings of
// them: the CLI must print exactly what the library renders.
var (
	fixture1500 = filepath.Join("..", "..", "testdata", "results", "mtu1500.json")
	fixture9000 = filepath.Join("..", "..", "testdata", "results", "mtu9000.json")
	goldenDir   = filepath.Join("..", "..", "reports", "testdata")
)

// reportCLI runs the CLI as main does.
func reportCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReportFormats(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // file with the expected stdout
	}{
		{"table", []string{"report", fixture1500}, filepath.Join(goldenDir, "mtu1500.txt")},
		{"flags after the file", []string{"report", fixture1500, "--format", "json"}, fixture1500},
		{"flags before the file", []string{"report", "--format=json", fixture1500}, fixture1500},
		{"csv one test", []string{"report", fixture1500, "--format", "csv", "--test", "search-log"}, filepath.Join(goldenDir, "mtu1500_search_log.csv")},
		{"html", []string{"report", fixture1500, "--format", "html"}, filepath.Join(goldenDir, "mtu1500.html")},
		{"svg one chart", []string{"report", fixture1500, "--format", "svg", "--chart", "frame-loss"}, filepath.Join(goldenDir, "mtu1500_frame_loss.svg")},
		{"svg chart implied by test", []string{"report", fixture1500, "--format", "svg", "--test", "throughput"}, filepath.Join(goldenDir, "mtu1500_throughput.svg")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := reportCLI(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(readFile(t, tt.want), stdout); diff != "" {
				t.Errorf("stdout differs from %s (-want +got):\n%s", tt.want, diff)
			}
		})
	}
}

func TestReportOneTable(t *testing.T) {
	stdout, _, err := reportCLI(t, "report", fixture1500, "--test", "b2b")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "Back-to-back frames (RFC 2544 §26.4, RFC 9004)\n") || strings.Contains(stdout, "Throughput") {
		t.Errorf("--test b2b printed more or less than the back-to-back table:\n%s", stdout)
	}
	// One test as JSON keeps the metadata and only that test.
	stdout, _, err = reportCLI(t, "report", fixture1500, "--format", "json", "--test", "latency")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"latency": [`, `"plan": {`, `"dut": {`} {
		if !strings.Contains(stdout, s) {
			t.Errorf("--format json --test latency lacks %s", s)
		}
	}
	for _, s := range []string{`"throughput": [`, `"back_to_back": [`} {
		if strings.Contains(stdout, s) {
			t.Errorf("--format json --test latency still holds %s", s)
		}
	}
}

func TestReportPNG(t *testing.T) {
	stdout, _, err := reportCLI(t, "report", fixture1500, "--format", "png", "--chart", "latency_cdf")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("stdout is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != 768 || sz.Y != 480 {
		t.Errorf("PNG is %v, want 768x480", sz)
	}
}

func TestReportOutDir(t *testing.T) {
	tests := []struct {
		format string
		files  []string
	}{
		{"table", []string{"report.txt"}},
		{"json", []string{"results.json"}},
		{"html", []string{"report.html"}},
		{"csv", []string{"throughput.csv", "search_log.csv", "latency.csv", "frame_loss.csv", "back_to_back.csv", "system_recovery.csv", "probe.csv"}},
		{"svg", []string{"throughput.svg", "latency.svg", "frame_loss.svg", "latency_cdf.svg", "latency_percentile.svg", "throughput_percent.svg", "frame_loss_log.svg"}},
		{"png", []string{"throughput.png", "latency.png", "frame_loss.png", "latency_cdf.png", "latency_percentile.png", "throughput_percent.png", "frame_loss_log.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "new")
			stdout, _, err := reportCLI(t, "report", fixture1500, "--format", tt.format, "--out", dir)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
				info, err := e.Info()
				if err != nil {
					t.Fatal(err)
				}
				if info.Size() == 0 {
					t.Errorf("%s is empty", e.Name())
				}
				if perm := info.Mode().Perm(); perm != 0o644 {
					t.Errorf("%s has mode %v, want -rw-r--r--", e.Name(), perm)
				}
			}
			want := append([]string(nil), tt.files...)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("files in --out (-want +got):\n%s", diff)
			}
			for _, f := range tt.files {
				if !strings.Contains(stdout, "wrote "+filepath.Join(dir, f)) {
					t.Errorf("stdout does not list %s:\n%s", f, stdout)
				}
			}
		})
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	newer := filepath.Join(dir, "newer.json")
	onlyTput := filepath.Join(dir, "tput.json")
	os.WriteFile(corrupt, []byte("{\n  \"schema\": 1,\n  \"tool\": \"rfc2544\"\n  \"plan\": {}\n}\n"), 0o644)
	os.WriteFile(newer, []byte(`{"schema": 7, "tool": "rfc2544 v3"}`), 0o644)
	os.WriteFile(onlyTput, []byte(`{"schema": 1, "throughput": [{"frame_size": 64, "found": true, "fps": 1000, "trials": []}]}`), 0o644)
	tests := []struct {
		name  string
		args  []string
		usage bool     // a usage error (exit 2)
		want  []string // substrings of the error
	}{
		{"no file", []string{"report"}, true, []string{"no results file given"}},
		{"two files", []string{"report", fixture1500, fixture9000}, true, []string{"one results file at a time", "rfc2544 compare A B"}},
		{"nonexistent file", []string{"report", filepath.Join(dir, "nope.json")}, false, []string{"nope.json", "no such file"}},
		{"corrupt json", []string{"report", corrupt}, false, []string{"corrupt.json", "not valid JSON at line 4, column 3"}},
		{"newer schema", []string{"report", newer}, false, []string{"newer.json", "schema 7", "newer than schema 2", "upgrade rfc2544"}},
		{"unknown format", []string{"report", fixture1500, "--format", "pdf"}, true, []string{`--format "pdf": unknown; want one of table, json, csv, html, svg, png`}},
		{"unknown test", []string{"report", fixture1500, "--test", "jitter"}, true, []string{`unknown test "jitter"`, "throughput, search_log"}},
		{"unknown chart", []string{"report", fixture1500, "--format", "svg", "--chart", "pie"}, true, []string{`unknown chart "pie"`}},
		{"chart without image format", []string{"report", fixture1500, "--chart", "latency"}, true, []string{"--chart goes with --format svg or png"}},
		{"test not in results", []string{"report", onlyTput, "--test", "latency"}, true, []string{"hold no latency results", "the run's tests: throughput, search_log"}},
		{"csv on stdout needs a test", []string{"report", fixture1500, "--format", "csv"}, true, []string{"csv on stdout is one table", "--test", "--out DIR"}},
		{"png on stdout needs a chart", []string{"report", fixture1500, "--format", "png"}, true, []string{"png on stdout is one chart", "--chart (throughput, latency, frame_loss, latency_cdf, latency_percentile, throughput_percent, frame_loss_log)"}},
		{"test without chart", []string{"report", fixture1500, "--format", "svg", "--test", "b2b"}, true, []string{"--test back_to_back has no chart"}},
		{"unknown flag", []string{"report", fixture1500, "--colour"}, true, []string{"unknown flag --colour", "--help"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := reportCLI(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%.300s", stdout)
			}
			var ue usageError
			if got := errors.As(err, &ue); got != tt.usage {
				t.Errorf("usage error = %v, want %v (%v)", got, tt.usage, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestReportHelp(t *testing.T) {
	for _, args := range [][]string{{"report", "--help"}, {"compare", "-h"}} {
		stdout, _, err := reportCLI(t, args...)
		if err != nil {
			t.Errorf("%v: %v", args, err)
		}
		for _, s := range []string{"Usage: rfc2544 " + args[0], "Examples:", "-format"} {
			if !strings.Contains(stdout, s) {
				t.Errorf("%v help lacks %q:\n%s", args, s, stdout)
			}
		}
	}
}
