package main

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// simStream is a short sim run whose final trials last 3 s: 3 intervals
// each (the mlr search's first trials are shorter).
var simStream = []string{"run", "--transport", "sim", "--profile", "quick", "--sizes", "64", "--tests", "throughput",
	"--duration", "3s", "--no-probe", "--quiet"}

// checkIntervals checks a sequence of lines (decoded JSON objects): each
// trial line follows exactly its ⌈duration/1 s⌉ intervals, numbered from 0
// and labelled with its test, size and step, whose frames add up to the
// trial's. It returns the trials seen and how many lasted 3 s.
func checkIntervals(t *testing.T, where string, lines []map[string]any, trialEvent string) (trials, long int) {
	t.Helper()
	var ivs []map[string]any
	for _, l := range lines {
		switch l["event"] {
		case "interval":
			ivs = append(ivs, l)
		case trialEvent:
			trials++
			want := int(math.Ceil(l["result"].(map[string]any)["spec"].(map[string]any)["duration_ns"].(float64) / 1e9))
			if want == 3 {
				long++
			}
			if len(ivs) != want {
				t.Fatalf("%s: trial %v step %v follows %d intervals, want %d", where, l["test"], l["step"], len(ivs), want)
			}
			var off, rx float64
			for i, iv := range ivs {
				if iv["index"] != float64(i) || iv["test"] != l["test"] || iv["frame_size"] != l["frame_size"] || iv["step"] != l["step"] {
					t.Errorf("%s: interval %d is %v, want index %d of %v %v step %v", where, i, iv, i, l["test"], l["frame_size"], l["step"])
				}
				off += iv["offered"].(float64)
				rx += iv["received"].(float64)
			}
			if ivs[want-1]["final"] != true || off != l["sent"] || rx != l["received"] {
				t.Errorf("%s: step %v intervals add up to offered %.0f received %.0f (final %v); the trial sent %v received %v",
					where, l["step"], off, rx, ivs[want-1]["final"], l["sent"], l["received"])
			}
			ivs = nil
		}
	}
	if trials == 0 || long == 0 {
		t.Errorf("%s: %d trials, %d of 3 s; want some of 3 s", where, trials, long)
	}
	return trials, long
}

func decodeLines(t *testing.T, where, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: a line is not one JSON object (%v): %.100s", where, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// TestJournalIntervals: the journal holds each trial's intervals before its
// trial line, and a resume reads past them.
func TestJournalIntervals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, stderr, err := runCLI(t, context.Background(), append(simStream, "--out", out)...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, journalName))
	if err != nil {
		t.Fatal(err)
	}
	lines := decodeLines(t, "journal", string(b))
	if lines[0]["journal"] != float64(2) {
		t.Errorf("journal header version %v, want 2", lines[0]["journal"])
	}
	// A journal's trial lines carry no event: label them for the check.
	for _, l := range lines[1:] {
		if l["event"] == nil {
			l["event"] = "journal-trial"
		}
	}
	n, _ := checkIntervals(t, "journal", lines[1:], "journal-trial")
	jc, err := rfc2544.ReadJournal(filepath.Join(out, journalName))
	if err != nil {
		t.Fatal(err)
	}
	if len(jc.Records) != n || jc.Intervals != len(lines)-1-n {
		t.Errorf("readJournal: %d records and %d intervals, want %d and %d", len(jc.Records), jc.Intervals, n, len(lines)-1-n)
	}
}

// TestJSONStream: --json-stream writes only JSON lines to stdout: start
// (with the plan's estimate), each trial's intervals then the trial, and the
// end with the results.
func TestJSONStream(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, err := runCLI(t, context.Background(), append(simStream, "--json-stream", "--out", out)...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	lines := decodeLines(t, "stream", stdout)
	if len(lines) < 3 || lines[0]["event"] != "start" || lines[len(lines)-1]["event"] != "end" {
		t.Fatalf("stream of %d lines, want start … end: first %v", len(lines), lines[0]["event"])
	}
	if lines[0]["estimate_s"].(float64) <= 0 || lines[0]["plan"] == nil {
		t.Errorf("start event %v lacks the estimate or the plan", lines[0])
	}
	n, _ := checkIntervals(t, "stream", lines[1:len(lines)-1], "trial")
	var end struct {
		Results rfc2544.Results `json:"results"`
	}
	b, _ := json.Marshal(lines[len(lines)-1])
	if err := json.Unmarshal(b, &end); err != nil {
		t.Fatal(err)
	}
	if got := end.Results.Trials(); got != n || len(end.Results.Throughput) != 1 {
		t.Errorf("end event: %d trials, %d throughput results; want %d trials, 1 result", got, len(end.Results.Throughput), n)
	}
}

func TestJSONStreamWithJSONRefused(t *testing.T) {
	_, _, err := runCLI(t, context.Background(), append(simStream, "--json-stream", "--json", "--out", filepath.Join(t.TempDir(), "x"))...)
	if err == nil || !strings.Contains(err.Error(), "--json and --json-stream: choose one") {
		t.Fatalf("got %v, want --json with --json-stream refused", err)
	}
}
