package rfc2544

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestPlanFlags: flags set only the fields given, over a complete plan, and
// a field Validate refuses is named by the flag that set it.
func TestPlanFlags(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddPlanFlags(fs, true)
	if err := fs.Parse([]string{"--tests", "b2b,latency", "--sizes", "64,63", "--duration", "7s", "--resolution", "0.25%", "--retries", "0", "--jumbo"}); err != nil {
		t.Fatal(err)
	}
	p, err := DefaultPlan("quick")
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithDefaults()
	settle := p.Trial.Settle
	if err := f.Apply(&p, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.Tests; len(got) != 2 || got[0] != TestBackToBack || got[1] != TestLatency {
		t.Errorf("tests %v", got)
	}
	if time.Duration(p.Trial.Duration) != 7*time.Second || p.Trial.Settle != settle || p.Trial.Retries != -1 {
		t.Errorf("trial %+v: want duration 7s, settle kept %v, retries -1 (never)", p.Trial, settle)
	}
	if p.Throughput.ResolutionRelativePercent != 0.25 || p.Throughput.ResolutionPercent != 0 {
		t.Errorf("resolution %g points, %g%% relative; want 0.25%% relative", p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent)
	}
	if n := len(p.FrameSizes); n != 2+len(JumboSizes) {
		t.Errorf("frame sizes %v: want 64, 63 and the jumbo sizes", p.FrameSizes)
	}
	verr := p.Validate()
	if got := f.Flag(verr); got != "--sizes 64,63" && got != `--sizes "64,63"` {
		t.Errorf("Flag(%v) = %q, want --sizes", verr, got)
	}
	if err := f.Apply(&p, []Test{TestThroughput}); err != nil || len(p.Tests) != 1 {
		t.Errorf("fixed tests: %v, %v", p.Tests, err)
	}

	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	f = AddPlanFlags(fs, false)
	if fs.Lookup("tests") != nil {
		t.Error("--tests registered for a one-test verb")
	}
	fs.Parse([]string{"--latency-percentile", "99"})
	if err := f.Apply(&p, nil); err == nil || !strings.Contains(err.Error(), "--max-latency") {
		t.Errorf("--latency-percentile alone: %v, want it to ask for --max-latency", err)
	}
}
