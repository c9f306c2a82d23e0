package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
)

// TestRunAgentOneWay: 'run --agent' against a real agent in the lab's
// namespace B, from namespace A, through a DUT shaped to 50 Mbit/s each way.
// With --clock-sync ptp (and an agent started so) the latency is one way in
// each direction, and the results say so; the throughput is the shaped rate,
// −3 % … +1 % of R = 50 Mbit/s / (8·508 B) per direction. R is 52 % of the
// 100 Mbit/s nominal line (--line-rate), so --resolution 0.25 (points of
// that line) is 0.5 % of R: the window means something. Not tester-limited:
// a trial spoiled by a stall of this host is run again (--retries), a
// persistent limit fails. The DUT has the lab's default queue (1000
// packets) and bucket (10 ms): a catch-up after a 3-16 ms stall of this VM
// no longer overflows it below R (through a 50-packet queue it did, trial
// after trial, in CI on 2026-12-01), and a load above R is caught by its
// loss or by its queue growing, which the agent's one-way latency trend
// shows. Truth claim "ndr-agent": the sum and each direction in the trial
// reported.
func TestRunAgentOneWay(t *testing.T) {
	c := truth.New(t, "ndr-agent")
	needRoot(t)
	const rateBps = 50e6
	sh := lab.Shaping{RateBps: rateBps}
	st := labtest.New(t, lab.Config{AtoB: sh, BtoA: sh})

	dir := t.TempDir()
	addr, tok := serveLabAgent(t, st, agent.Policy{MaxRateBps: 1e9, MaxDuration: time.Minute, ClockSync: agent.ClockPTP})

	out := filepath.Join(dir, "out")
	_, stderr, err := runCLI(t, context.Background(), "run", "--agent", addr, "--token-file", tok,
		"--netns-a", st.A.Namespace, "--clock-sync", "ptp", "--bidir", "--tests", "throughput,latency", "--sizes", "512",
		"--profile", "quick", "--line-rate", "100M", "--resolution", "0.25", "--duration", "1s", "--settle", "200ms", "--latency-duration", "1s", "--out", out)
	if err != nil {
		t.Fatalf("run: %v (exit %d; %d is tester-limited)\nstderr:\n%s", err, exitCode(err, io.Discard), exitTesterLimited, stderr)
	}
	if !strings.Contains(stderr, "latency one way each way (--clock-sync ptp") {
		t.Errorf("the run does not say its latency is one way:\n%s", stderr)
	}
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Tester.Paths.Latency != "one-way" || res.DUT.Settings["latency"] != "one-way" {
		t.Errorf("results: paths latency %q, dut latency %q; want one-way", res.Tester.Paths.Latency, res.DUT.Settings["latency"])
	}
	shaped := rateBps / (508 * 8)
	if len(res.Throughput) != 1 || !res.Throughput[0].Found || res.Throughput[0].TesterLimited || len(res.Throughput[0].Directions) != 2 {
		t.Fatalf("throughput %+v: want one result, found, not tester-limited, both directions", res.Throughput)
	}
	tp := res.Throughput[0]
	c.Ratio("throughput / R", "run --agent --bidir, one-way latency, 512 B at 50 Mbit/s", 2*shaped, tp.FPS, 0.97, 1.01)
	for _, d := range tp.Directions {
		c.Ratio("received per direction / R, bidirectional", fmt.Sprintf("run --agent --bidir, %v", d.Direction), shaped, d.ReceivedFPS, 0.97, 1.01)
	}
	if len(res.Latency) != 1 || res.Latency[0].Skipped != "" || len(res.Latency[0].Trials) == 0 {
		t.Fatalf("latency results %+v", res.Latency)
	}
	for _, rec := range res.Latency[0].Trials {
		for _, s := range rec.Result.Streams {
			// One way on each receiver's clock: both directions carry a
			// latency (round trip would leave B->A without one).
			if s.Latency.Count == 0 || s.Latency.MinNs <= 0 {
				t.Errorf("latency trial %d stream %d %v: no one-way latency (%+v)", rec.Repetition, s.ID, s.Direction, s.Latency)
			}
		}
	}
	t.Logf("throughput %.0f fps; latency %s, mean %.0f ns", res.Throughput[0].FPS, res.Tester.Paths.Latency, res.Latency[0].Summary.MeanNs)
}

// TestRunAgentNoRoomToReflect: a bidirectional latency test against an
// agent whose --max-rate its own B->A stream fills leaves no room to
// reflect the tagged frames: the run says so, naming the cause, instead of
// reporting lost tagged frames with exit 0 (issue 17 item 10).
func TestRunAgentNoRoomToReflect(t *testing.T) {
	needRoot(t)
	st := labtest.New(t, lab.Config{})
	dir := t.TempDir()
	addr, tok := serveLabAgent(t, st, agent.Policy{MaxRateBps: 10e6, MaxDuration: time.Minute})
	out := filepath.Join(dir, "out")
	_, stderr, err := runCLI(t, context.Background(), "run", "--agent", addr, "--token-file", tok,
		"--netns-a", st.A.Namespace, "--bidir", "--max-rate", "10M", "--line-rate", "10M", "--tests", "latency", "--sizes", "1518",
		"--profile", "quick", "--duration", "500ms", "--settle", "100ms", "--latency-duration", "500ms", "--latency-reps", "1", "--quiet", "--out", out)
	if err == nil {
		t.Fatalf("exit 0: the latency test ran with no room to reflect its tagged frames\nstderr:\n%s", stderr)
	}
	for _, want := range []string{"round-trip latency", "--max-rate", "no room to reflect"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if exitCode(err, io.Discard) != exitTestError {
		t.Errorf("exit %d, want %d (test error)", exitCode(err, io.Discard), exitTestError)
	}
	// The throughput search ran (the latency test needs it); no latency
	// trial was sent or recorded.
	jc, jerr := rfc2544.ReadJournal(filepath.Join(out, journalName))
	if jerr != nil {
		t.Fatal(jerr)
	}
	for _, rec := range jc.Records {
		if rec.Test == rfc2544.TestLatency {
			t.Errorf("a latency trial was run and journaled: %+v", rec.Result.Spec)
		}
	}
}

// serveLabAgent starts a real agent in the lab's namespace B, on its port
// B address, with policy p and a token written to a file of its own; it
// returns the agent's address and the token file (--token-file).
func serveLabAgent(t *testing.T, st *lab.State, p agent.Policy) (addr, tokenFile string) {
	t.Helper()
	tokenFile = filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tokenFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	token, err := agent.LoadToken(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	return agenttest.Serve(t, st.B.Namespace, st.B.IPv4.Addr(), token, p), tokenFile
}
