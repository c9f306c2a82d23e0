package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestMLRFlags: the MLRsearch flags reach the plan (through --dry-run
// --json), and bad values name the flag and the fix before any trial.
func TestMLRFlags(t *testing.T) {
	dir := t.TempDir()
	dry := func(args ...string) (rfc2544.Plan, float64) {
		t.Helper()
		a := append([]string{"run", "--transport", "sim", "--dry-run", "--json", "--out", filepath.Join(dir, "out")}, args...)
		stdout, stderr, err := runCLI(t, context.Background(), a...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		var out struct {
			Plan      rfc2544.Plan `json:"plan"`
			ExpectedS float64      `json:"expected_duration_s"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("dry-run JSON: %v\n%s", err, stdout)
		}
		return out.Plan, out.ExpectedS
	}
	p, exp := dry()
	if p.Throughput.Search != rfc2544.SearchMLR || len(p.Throughput.Goals) != 2 || p.Throughput.Goals[0].Name != "RFC2544" {
		t.Errorf("default plan: search %q goals %+v, want mlr with the RFC 2544 compatibility goal first", p.Throughput.Search, p.Throughput.Goals)
	}
	if exp < 3600 {
		t.Errorf("expected duration of a full rfc2544 run %.0f s: want hours", exp)
	}
	p, _ = dry("--goals", "NDR=0,PLR=1%", "--resolution", "0.25%", "--allow-buffering", "--max-latency", "30us", "--latency-percentile", "99.9")
	tc := p.Throughput
	if len(tc.Goals) != 2 || tc.Goals[1].Name != "PLR" || tc.Goals[1].LossPercent != 1 || !tc.AllowBuffering ||
		tc.MaxLatency.D() != 30*time.Microsecond || tc.LatencyPercentile != 99.9 || tc.ResolutionRelativePercent != 0.25 || tc.ResolutionPercent != 0 {
		t.Errorf("flags did not reach the plan: %+v", tc)
	}
	if p, _ = dry("--search", "binary", "--resolution", "0.5"); p.Throughput.ResolutionPercent != 0.5 || p.Throughput.ResolutionRelativePercent != 0 {
		t.Errorf("--resolution 0.5: %g points, %g%% relative: want points", p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent)
	}

	bad := []struct {
		args []string
		want []string
	}{
		{[]string{"--goals", "NDR=x"}, []string{"--goals", "not a loss", "NDR=0,PDR=0.5%"}},
		{[]string{"--goals", "A=0,A=1"}, []string{"--goals", "its own name"}},
		{[]string{"--goals", "NDR=100"}, []string{"--goals", "loss_percent"}},
		{[]string{"--search", "fast"}, []string{"--search", "mlr, binary, step or combo"}},
		{[]string{"--latency-percentile", "95", "--max-latency", "30us"}, []string{"--latency-percentile 95", "99.9"}},
		{[]string{"--latency-percentile", "99"}, []string{"--latency-percentile", "--max-latency"}},
		{[]string{"--resolution", "60%"}, []string{"resolution_relative_percent", "0.5"}},
		{[]string{"--loss-tolerance", "0.1"}, []string{"loss_tolerance_percent", "--goals", "binary"}},
	}
	for _, tt := range bad {
		_, _, err := runCLI(t, context.Background(), append([]string{"run", "--transport", "sim", "--dry-run", "--out", filepath.Join(dir, "out")}, tt.args...)...)
		if err == nil {
			t.Errorf("%v: accepted", tt.args)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", tt.args, err, w)
			}
		}
	}
}
