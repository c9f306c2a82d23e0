package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// runCLI calls run as main does and returns stdout, stderr and the error.
func runCLI(t *testing.T, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(ctx, args, &out, &errb)
	return out.String(), errb.String(), err
}

// countingTester counts trials and can cancel the run at a given trial,
// the way Ctrl-C does: the trial in progress returns with ctx's error.
type countingTester struct {
	next     rfc2544.Tester
	mu       sync.Mutex
	n        int
	cancelAt int // 1-based trial at which to cancel; 0 never
	cancel   context.CancelFunc
}

func (c *countingTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	if n == c.cancelAt {
		c.cancel()
		return trials.Result{Spec: spec}, ctx.Err()
	}
	return c.next.Run(ctx, spec)
}

func (c *countingTester) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wrapTester replaces openTester for one test: the real tester of the
// setup (the simulator in these tests) wrapped by wrap.
func wrapTester(t *testing.T, wrap func(rfc2544.Tester) rfc2544.Tester) {
	t.Helper()
	orig := openTester
	openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
		ot, err := orig(ctx, s, logw)
		if err != nil {
			return ot, err
		}
		ot.tester = wrap(ot.tester)
		return ot, nil
	}
	t.Cleanup(func() { openTester = orig })
}

func readJournalLines(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, journalName))
	if err != nil {
		t.Fatal(err)
	}
	// The header and trial lines, not the interval lines (progress).
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, `{"event":"interval"`) {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestRunSimJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--profile", "quick",
		"--sizes", "64,1518", "--json", "--out", out)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr)
	}
	// stdout holds the results JSON and nothing else.
	res, err := reports.ReadResults(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("stdout is not a results file: %v\n%s", err, stdout)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(dec.Buffered()); strings.TrimSpace(string(rest)) != "" {
		t.Errorf("stdout has more than the JSON document: %q", rest)
	}
	if got, want := len(res.Throughput), 2; got != want {
		t.Fatalf("throughput results: got %d, want %d", got, want)
	}
	for _, tp := range res.Throughput {
		// The simulated DUT forwards 80% of the 1 Gbit/s line rate and
		// buffers 256 KiB: a 1 s trial of 1518-byte frames passes up to
		// 80% + 172 fps = 80.21% (of 64-byte frames 80.003%); the search
		// must land just under that.
		if !tp.Found || tp.IntendedPercent > 80.22 || tp.IntendedPercent < 78 {
			t.Errorf("size %d: throughput %.3f%% (found %v), want 78-80.22%%", tp.FrameSize, tp.IntendedPercent, tp.Found)
		}
	}
	if res.Tester.Transport != "sim" || !strings.Contains(res.DUT.Description, "simulated") {
		t.Errorf("results do not say the DUT was simulated: transport %q, dut %q", res.Tester.Transport, res.DUT.Description)
	}
	// results.json on disk is the same document.
	disk, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Throughput, disk.Throughput); diff != "" {
		t.Errorf("results.json differs from stdout (-stdout +file):\n%s", diff)
	}
	// The journal: a header, then one line per trial.
	lines := readJournalLines(t, out)
	if got, want := len(lines)-1, res.Trials(); got != want {
		t.Errorf("journal has %d trial lines, results count %d trials", got, want)
	}
	jc, err := rfc2544.ReadJournal(filepath.Join(out, journalName))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Plan, jc.Header.Plan); diff != "" {
		t.Errorf("journal plan differs from the results' plan (-results +journal):\n%s", diff)
	}
	// Progress went to stderr, one line per trial (not a terminal).
	if got := strings.Count(stderr, " step "); got != res.Trials() {
		t.Errorf("stderr has %d progress lines, want %d:\n%s", got, res.Trials(), stderr)
	}
}

func TestRunTablesAndQuiet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runCLI(t, context.Background(), "throughput", "--transport", "sim", "--profile", "quick",
		"--sizes", "512", "--quiet", "--out", out)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if stderr != "" {
		t.Errorf("--quiet: stderr not empty:\n%s", stderr)
	}
	for _, want := range []string{"Throughput (RFC 2544 §26.1)", "512"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Latency (RFC") {
		t.Errorf("the throughput verb ran more than throughput:\n%s", stdout)
	}
	for _, f := range []string{"results.json", "report.txt", "report.html", journalName} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("output folder: %v", err)
		}
	}
}

// TestResumeSim interrupts a run at a trial, as Ctrl-C does, then resumes
// it: the journal must hold every trial finished before the interruption,
// the resumed run must run only the rest, and the results must be those of
// an uninterrupted run.
func TestResumeSim(t *testing.T) {
	args := []string{"run", "--transport", "sim", "--profile", "quick", "--sizes", "64,1518", "--tests", "throughput,b2b", "--quiet"}

	refOut := filepath.Join(t.TempDir(), "ref")
	ref := &countingTester{}
	wrapTester(t, func(next rfc2544.Tester) rfc2544.Tester { ref.next = next; return ref })
	if _, _, err := runCLI(t, context.Background(), append(args, "--out", refOut)...); err != nil {
		t.Fatalf("reference run: %v", err)
	}
	total := ref.count()

	for _, at := range []int{1, 2, total / 2, total} {
		out := filepath.Join(t.TempDir(), "run")
		ctx, cancel := context.WithCancel(context.Background())
		ct := &countingTester{cancelAt: at, cancel: cancel}
		wrapTester(t, func(next rfc2544.Tester) rfc2544.Tester { ct.next = next; return ct })
		_, _, err := runCLI(t, ctx, append(args, "--out", out)...)
		cancel()
		if !errors.Is(err, errInterrupted) || exitCode(err, io.Discard) != exitInterrupted {
			t.Fatalf("interrupted at trial %d: got %v (exit %d), want interrupted (exit 130)", at, err, exitCode(err, io.Discard))
		}
		if got, want := len(readJournalLines(t, out))-1, at-1; got != want {
			t.Fatalf("interrupted at trial %d: journal has %d trials, want %d", at, got, want)
		}
		partial, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
		if err != nil || !strings.Contains(partial.Error, "interrupted") {
			t.Fatalf("interrupted at trial %d: partial results.json: %v, error field %q", at, err, partial.Error)
		}

		rt := &countingTester{}
		wrapTester(t, func(next rfc2544.Tester) rfc2544.Tester { rt.next = next; return rt })
		_, stderr, err := runCLI(t, context.Background(), "run", "--resume", out)
		if err != nil {
			t.Fatalf("resume after trial %d: %v\n%s", at, err, stderr)
		}
		if got := strings.Count(stderr, "[from the journal]"); got != at-1 {
			t.Errorf("resume after trial %d: %d progress lines say the trial came from the journal, want %d", at, got, at-1)
		}
		if got, want := rt.count(), total-(at-1); got != want {
			t.Errorf("resume after trial %d ran %d trials, want %d (no finished trial repeated)", at, got, want)
		}
		if got := len(readJournalLines(t, out)) - 1; got != total {
			t.Errorf("resume after trial %d: journal has %d trials, want %d", at, got, total)
		}
		want, _ := reports.ReadResultsFile(filepath.Join(refOut, "results.json"))
		got, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Error != "" {
			t.Errorf("resumed results still carry an error: %q", got.Error)
		}
		type row struct {
			Size     int
			Intended float64
			Trials   int
		}
		rows := func(r *rfc2544.Results) (out []row) {
			for _, x := range r.Throughput {
				out = append(out, row{x.FrameSize, x.IntendedPercent, len(x.Trials)})
			}
			for _, x := range r.BackToBack {
				out = append(out, row{x.FrameSize, x.AvgFrames, len(x.Trials)})
			}
			return out
		}
		if diff := cmp.Diff(rows(want), rows(got)); diff != "" {
			t.Errorf("resume after trial %d: results differ from an uninterrupted run (-want +got):\n%s", at, diff)
		}
	}
}

func TestResumeMismatch(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--profile", "quick", "--sizes", "64",
		"--tests", "throughput", "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	// Change the third trial's rate in the journal: the run will ask for
	// another trial than the journal holds.
	path := filepath.Join(out, journalName)
	lines := readJournalLines(t, out)
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[3]), &rec); err != nil {
		t.Fatal(err)
	}
	rec["result"].(map[string]any)["spec"].(map[string]any)["rate_fps"] = 12345.0
	b, _ := json.Marshal(rec)
	lines[3] = string(b)
	if err := os.WriteFile(path, []byte(strings.Join(lines[:4], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI(t, context.Background(), "run", "--resume", out, "--quiet")
	if err == nil || !strings.Contains(err.Error(), "resume: trial 3 of the journal") {
		t.Fatalf("got %v, want a resume mismatch error naming trial 3", err)
	}
}

func TestJournalHalfWrittenLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--profile", "quick", "--sizes", "64",
		"--tests", "throughput", "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(out, journalName)
	lines := readJournalLines(t, out)
	// A crash in the middle of writing the fourth line.
	cut := strings.Join(lines[:3], "\n") + "\n" + lines[3][:len(lines[3])/2]
	if err := os.WriteFile(path, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	jc, err := rfc2544.ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(jc.Records); got != 2 {
		t.Fatalf("read %d records, want the 2 complete ones", got)
	}
	if _, _, err := runCLI(t, context.Background(), "run", "--resume", out, "--quiet"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if got, want := len(readJournalLines(t, out)), len(lines); got != want {
		t.Errorf("journal after resume has %d lines, want %d", got, want)
	}
	for _, l := range readJournalLines(t, out) {
		if !json.Valid([]byte(l)) {
			t.Errorf("journal line is not JSON: %.80s", l)
		}
	}
}

func TestExitCodes(t *testing.T) {
	t.Run("tester-limited", func(t *testing.T) {
		orig := openTester
		t.Cleanup(func() { openTester = orig })
		openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
			d := simDUT(s)
			d.TesterCeilingFPS = 50000 // below the DUT at 64 bytes
			return openedTester{tester: d, close: func() {}}, nil
		}
		_, _, err := runCLI(t, context.Background(), "throughput", "--transport", "sim", "--profile", "quick", "--sizes", "64",
			"--quiet", "--out", filepath.Join(t.TempDir(), "o"))
		if got := exitCode(err, io.Discard); got != exitTesterLimited {
			t.Errorf("got exit %d (%v), want %d", got, err, exitTesterLimited)
		}
	})
	t.Run("test error", func(t *testing.T) {
		orig := openTester
		t.Cleanup(func() { openTester = orig })
		openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
			return openedTester{tester: failingTester{errors.New("port a: link down")}, close: func() {}}, nil
		}
		out := filepath.Join(t.TempDir(), "o")
		_, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--quiet", "--out", out)
		if got := exitCode(err, io.Discard); got != exitTestError || !strings.Contains(err.Error(), "link down") {
			t.Errorf("got exit %d (%v), want %d with the tester's error", got, err, exitTestError)
		}
		if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
			t.Errorf("no results.json after a test error: %v", err)
		}
	})
	t.Run("help", func(t *testing.T) {
		for _, verb := range []string{"run", "throughput", "latency", "loss", "b2b"} {
			stdout, _, err := runCLI(t, context.Background(), verb, "--help")
			if err != nil || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "--lab [NAME]") {
				t.Errorf("%s --help: err %v, output:\n%s", verb, err, stdout)
			}
		}
	})
}

type failingTester struct{ err error }

func (f failingTester) Run(_ context.Context, spec trials.Spec) (trials.Result, error) {
	return trials.Result{Spec: spec}, f.err
}

func TestDryRunPlanPrecedence(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.yaml")
	os.WriteFile(plan, []byte("profile: quick\nframe_sizes: [128, 256]\ntrial:\n  duration: 5s\nthroughput:\n  search: step\n"), 0o644)
	stdout, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--plan", plan, "--sizes", "64",
		"--resolution", "0.25", "--retries", "0", "--dry-run", "--out", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	// The dry run's output is itself a plan file.
	got, _, err := rfc2544.ParsePlan("dry-run output", []byte(stdout), rfc2544.Plan{})
	if err != nil {
		t.Fatalf("dry-run output does not parse as a plan: %v\n%s", err, stdout)
	}
	want, _ := rfc2544.DefaultPlan("quick")
	want.FrameSizes = []int{64}                 // flag over file
	want.Trial.Duration = rfc2544.Duration(5e9) // file over profile
	want.Throughput.Search = rfc2544.SearchStep // file
	want.Throughput.ResolutionPercent = 0.25    // flag: points, not relative
	want.Throughput.ResolutionRelativePercent = 0
	want.Trial.Retries = -1            // flag: --retries 0 is never
	want.LinkBps = rig.NominalLineRate // sim's nominal rate
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effective plan (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--dry-run created the output folder (stat: %v)", err)
	}
}

func TestFixLabArg(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"alone", []string{"--lab"}, []string{"--lab="}},
		{"before a flag", []string{"--lab", "--sizes", "64"}, []string{"--lab=", "--sizes", "64"}},
		{"single dash", []string{"-lab", "-json"}, []string{"--lab=", "-json"}},
		{"named", []string{"--lab", "demo", "--json"}, []string{"--lab", "demo", "--json"}},
		{"equals", []string{"--lab=demo"}, []string{"--lab=demo"}},
		{"after --", []string{"--", "--lab"}, []string{"--", "--lab"}},
		{"last after flags", []string{"--json", "--lab"}, []string{"--json", "--lab="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, rig.FixLabArg(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// And through the parser: a bare --lab is a temporary lab.
	f, err := parseRunArgs("run", nil, []string{"--sizes", "64", "--lab"})
	if err != nil {
		t.Fatalf("bare --lab: %v", err)
	}
	if given, name := f.rig.Lab(); !given || name != "" {
		t.Errorf("bare --lab: lab %v %q; want a temporary lab", given, name)
	}
	f, err = parseRunArgs("run", nil, []string{"--lab", "demo", "--sizes", "64"})
	if err != nil {
		t.Fatalf("--lab demo: %v", err)
	}
	if given, name := f.rig.Lab(); !given || name != "demo" {
		t.Errorf("--lab demo: lab %v %q", given, name)
	}
}

func TestProgressTerminalLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, mustPlan(t, "quick"))
	p.tty = true
	spec := trials.Spec{FrameSize: 64}
	p.TrialStarted(rfc2544.TestThroughput, 64, 1, 100, spec)
	p.TrialFinished(rfc2544.TrialRecord{Test: rfc2544.TestThroughput, FrameSize: 64, Step: 1, LossPercent: 19.5})
	p.TrialStarted(rfc2544.TestLatency, 64, 1, 79.7, spec)
	p.done()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per test, got %d:\n%q", len(lines), b.String())
	}
	for _, want := range []string{"throughput", "64B", "step 1", "100.000%", "last loss 19.500%", "elapsed", "ETA ~"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("live line lacks %q: %q", want, lines[0])
		}
	}
	sc := bufio.NewScanner(strings.NewReader(lines[1]))
	sc.Scan()
	if !strings.Contains(sc.Text(), "latency") {
		t.Errorf("second test's line: %q", sc.Text())
	}
}

func mustPlan(t *testing.T, profile string) rfc2544.Plan {
	t.Helper()
	p, err := rfc2544.DefaultPlan(profile)
	if err != nil {
		t.Fatal(err)
	}
	p.LinkBps = 1e9
	return p.WithDefaults()
}

// TestSamplePlans checks that every sample plan in testdata/plans is read
// by run's strict plan reader and validates.
func TestSamplePlans(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "plans", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no sample plans: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			where := []string{"--transport", "sim"}
			if b, _ := os.ReadFile(path); strings.Contains(string(b), "\nlab_sweep:") {
				where = []string{"--lab"} // a sweep runs on temporary labs
			}
			args := append([]string{"run", "--plan", path, "--dry-run"}, where...)
			stdout, _, err := runCLI(t, context.Background(), args...)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if !strings.Contains(stdout, "frame_sizes:") {
				t.Errorf("no effective plan printed:\n%s", stdout)
			}
			// A tcp section is 'rfc2544 tcp's.
			if b, _ := os.ReadFile(path); strings.HasPrefix(string(b), "tcp:") || strings.Contains(string(b), "\ntcp:") {
				stdout, _, err := runCLI(t, context.Background(), "tcp", "--plan", path, "--dry-run", "--src", "198.18.0.1", "--dst", "198.18.0.2")
				if err != nil {
					t.Fatalf("tcp --plan: %v", err)
				}
				if !strings.Contains(stdout, "\ntcp:\n") {
					t.Errorf("tcp --dry-run printed no tcp section:\n%s", stdout)
				}
			}
		})
	}
}
