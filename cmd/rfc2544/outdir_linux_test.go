package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// loopbackArgs is a slow, gentle run on loopback (the udp transport between
// two addresses; no namespace, at most 10 Mbit/s): a few 2 s trials, so a
// test can act while it runs. Run it under the lab lock.
var loopbackArgs = []string{"run", "--transport", "udp", "--addr-a", "127.0.0.1/8", "--addr-b", "127.0.0.2/8",
	"--allow-any-destination", "--line-rate", "10M", "--profile", "quick", "--sizes", "64",
	"--tests", "throughput,loss", "--duration", "2s", "--no-probe"}

// startRun starts the built binary and waits until its journal holds a
// finished trial.
func startRun(t *testing.T, bin string, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, &stderr, waited
}

func waitTrials(t *testing.T, out string, n int, waited <-chan error, stderr *bytes.Buffer) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for journalTrials(out) < n {
		select {
		case err := <-waited:
			t.Fatalf("the run ended before %d trials: %v\nstderr:\n%s", n, err, stderr)
		case <-deadline:
			t.Fatalf("no %d trials after 15 s\nstderr:\n%s", n, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestOutLockProcesses runs the built binary on loopback and, while it
// runs, a second process that resumes the same folder and a third that
// starts a new run into it: both fail at once with a clear error, and after
// the first is interrupted the journal is intact (issue 17 item 6).
func TestOutLockProcesses(t *testing.T) {
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	out := filepath.Join(dir, "out")
	cmd, stderr, waited := startRun(t, bin, append(loopbackArgs, "--out", out)...)
	waitTrials(t, out, 1, waited, stderr)

	for _, args := range [][]string{{"run", "--resume", out}, append(loopbackArgs, "--out", out, "--overwrite")} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		second := exec.CommandContext(ctx, bin, args...)
		msg, err := second.CombinedOutput()
		cancel()
		if code := second.ProcessState.ExitCode(); code != exitUsage || !strings.Contains(string(msg), "in use by another rfc2544 run") {
			t.Errorf("%s while a run is going: exit %d (%v), want %d and an error saying the folder is in use:\n%s",
				strings.Join(args[:2], " "), code, err, exitUsage, msg)
		}
	}
	select {
	case err := <-waited:
		t.Fatalf("the first run ended before it was interrupted (%v): the test did not overlap\n%s", err, stderr)
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit within 15 s of SIGINT\n%s", stderr)
	}
	if got := cmd.ProcessState.ExitCode(); got != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", got, exitInterrupted, stderr)
	}
	if _, err := rfc2544.ReadJournal(filepath.Join(out, journalName)); err != nil {
		t.Errorf("journal after the overlapping attempts: %v", err)
	}
	if res, err := reports.ReadResultsFile(filepath.Join(out, "results.json")); err != nil || !strings.Contains(res.Error, "interrupted") {
		t.Errorf("partial results: %v", err)
	}
}
