package main

import (
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/reports"
)

func TestCompareMTU(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "overlay.png")
	stdout, stderr, err := reportCLI(t, "compare", fixture1500, fixture9000, "--chart", chart)
	if err != nil {
		t.Fatal(err)
	}
	// The jumbo sizes exist only on the 9000 side; shared sizes have a delta.
	a, b := fixtureFPS(t, fixture1500), fixtureFPS(t, fixture9000)
	for _, re := range []string{
		`│ +4096 │ throughput \(fps\) +│ +— \(only in B\) │ +` + b[4096] + ` │ +only in B │ +— │`,
		`│ +9018 │ throughput \(fps\) +│ +— \(only in B\) │ +` + b[9018] + ` │ +only in B │ +— │`,
		`│ +1518 │ throughput \(fps\) +│ +` + a[1518] + ` │ +` + b[1518] + ` │ +\+[0-9,]+ │ +×1\.0[0-9]+ │`,
		`│ +1522 │ throughput \(fps\) +│ +not found │ +` + b[1522] + ` │ +— │ +— │`,
		`Note: frame_loss: only in A \(B did not run it\)\.`,
		`A: mtu1500\.json`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("comparison lacks %s:\n%s", re, stdout)
		}
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("--chart PNG does not decode: %v", err)
	}
	if !strings.Contains(stderr, "wrote "+chart) {
		t.Errorf("stderr does not name the chart: %q", stderr)
	}
	// Same as the library's golden rendering.
	if diff := cmp.Diff(readFile(t, filepath.Join(goldenDir, "compare_1500_9000.txt")), stdout); diff != "" {
		t.Errorf("compare output differs from reports' golden file (-want +got):\n%s", diff)
	}
}

func TestCompareJSONAndTest(t *testing.T) {
	stdout, _, err := reportCLI(t, "compare", "--format", "json", "--test", "latency", fixture1500, fixture9000)
	if err != nil {
		t.Fatal(err)
	}
	var c reports.Comparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("--format json is not JSON: %v", err)
	}
	if len(c.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range c.Rows {
		if r.Test != "latency" {
			t.Errorf("--test latency kept a %s row", r.Test)
		}
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes about other tests kept: %q", c.Notes)
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(`{"schema": 3}`), 0o644)
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  []string
	}{
		{"one file", []string{"compare", fixture1500}, true, []string{"want two or more results files (A B ...), got 1"}},
		{"three files, latency", []string{"compare", fixture1500, fixture9000, fixture1500, "--test", "latency"}, true, []string{"more than two runs compare shows throughput only"}},
		{"missing B", []string{"compare", fixture1500, filepath.Join(dir, "nope.json")}, false, []string{"B: ", "nope.json", "no such file"}},
		{"newer A", []string{"compare", newer, fixture1500}, false, []string{"A: ", "schema 3", "newer than schema 2"}},
		{"bad chart extension", []string{"compare", fixture1500, fixture9000, "--chart", "x.gif"}, true, []string{`--chart "x.gif": the file name must end in .svg or .png`}},
		{"unknown format", []string{"compare", fixture1500, fixture9000, "--format", "xml"}, true, []string{`--format "xml": unknown; want table or json`}},
		{"unknown test", []string{"compare", fixture1500, fixture9000, "--test", "jitter"}, true, []string{`--test "jitter": unknown`}},
		{"test in neither", []string{"compare", fixture9000, fixture9000, "--test", "frame_loss"}, true, []string{"no frame_loss results in common"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := reportCLI(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
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

// TestCompareRuns: three or more files give one column per run (labelled by
// the folder that tells them apart) and a chart with one line per run.
func TestCompareRuns(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, r := range []struct{ name, src string }{{"fw-rules-0", fixture1500}, {"fw-rules-100", fixture9000}, {"fw-rules-1000", fixture1500}} {
		p := filepath.Join(dir, "sweep", r.name, "results.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(readFile(t, r.src)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	chart := filepath.Join(dir, "runs.png")
	stdout, _, err := reportCLI(t, append([]string{"compare", "--chart", chart}, files...)...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := fixtureFPS(t, fixture1500), fixtureFPS(t, fixture9000)
	for _, re := range []string{
		`1: fw-rules-0\n`, `3: fw-rules-1000\n`,
		`│ +1518 │ +` + a[1518] + ` │ +` + b[1518] + ` │ +` + a[1518] + ` │`,
		`│ +4096 │ +— \(not run\) │ +` + b[4096] + ` │ +— \(not run\) │`,
		`│ +1522 │ +— \(not found\) │ +` + b[1522] + ` │ +— \(not found\) │`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("comparison lacks %s:\n%s", re, stdout)
		}
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("--chart PNG does not decode: %v", err)
	}
	stdout, _, err = reportCLI(t, append([]string{"compare", "--format", "json"}, files...)...)
	if err != nil {
		t.Fatal(err)
	}
	var rs reports.Runs
	if err := json.Unmarshal([]byte(stdout), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs.Runs) != 3 || len(rs.FPS) != 3 || len(rs.FPS[0]) != len(rs.Sizes) {
		t.Errorf("json: %d runs, %d rows, %d sizes", len(rs.Runs), len(rs.FPS), len(rs.Sizes))
	}
}

// fixtureFPS reads a results fixture's throughput per frame size, as the
// comparison prints it (whole frames/s with thousands separators), so the
// expectations follow the fixtures when they are regenerated.
func fixtureFPS(t *testing.T, path string) map[int]string {
	t.Helper()
	res, err := reports.ReadResultsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, tp := range res.Throughput {
		if tp.Found {
			out[tp.FrameSize] = groupThousands(int64(math.Round(tp.FPS)))
		}
	}
	return out
}

// groupThousands writes n with a comma every three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
