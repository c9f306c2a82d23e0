package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rfc2544/rfc2544/reports"
)

// TestSignalDuringReport: the first SIGINT, SIGTERM or SIGHUP ends a
// 'report' at once (exit 130) with words that fit it, not the run's
// "stopping the current trial" (issue 17 item 9). The report is caught
// mid-write: its stdout is a pipe nobody reads, and the signal is sent once
// the pipe is full.
func TestSignalDuringReport(t *testing.T) {
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	out := filepath.Join(dir, "run")
	if _, _, err := runCLI(t, context.Background(), "run", "--transport", "sim", "--profile", "quick", "--quiet", "--out", out); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			capacity, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "report", filepath.Join(out, "results.json"), "--format", "json")
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			t.Cleanup(func() { cmd.Process.Kill() })
			deadline := time.After(10 * time.Second)
			for {
				n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ) // FIONREAD
				if err != nil {
					t.Fatal(err)
				}
				if n >= capacity {
					break // the report is blocked writing
				}
				select {
				case err := <-waited:
					t.Fatalf("report ended (%v) before filling the %d-byte pipe: its output is too small for this test", err, capacity)
				case <-deadline:
					t.Fatalf("the pipe holds %d of %d bytes after 10 s", n, capacity)
				case <-time.After(5 * time.Millisecond):
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-waited:
			case <-time.After(5 * time.Second):
				t.Fatalf("report still running 5 s after %v (the first signal was ignored)\nstderr:\n%s", sig, stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != exitInterrupted {
				t.Errorf("exit %d, want %d\nstderr:\n%s", got, exitInterrupted, stderr.String())
			}
			if s := stderr.String(); strings.Contains(s, "trial") || !strings.Contains(s, "exiting") {
				t.Errorf("stderr after %v does not fit a report:\n%s", sig, s)
			}
		})
	}
}

// TestSignalDuringRun: SIGHUP and SIGTERM stop a run like Ctrl-C: the
// current trial stops, partial results are written, exit 130 (issue 17
// item 12: SIGHUP used to end the run with no results). Lab lock: it sends
// (gentle) traffic on loopback.
func TestSignalDuringRun(t *testing.T) {
	dir := t.TempDir()
	bin := buildCLI(t, dir)
	for _, tt := range []struct {
		sig  syscall.Signal
		word string
	}{{syscall.SIGHUP, "hangup (SIGHUP)"}, {syscall.SIGTERM, "terminated (SIGTERM)"}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd, stderr, waited := startRun(t, bin, append(loopbackArgs, "--out", out)...)
			waitTrials(t, out, 1, waited, stderr)
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-waited:
			case <-time.After(15 * time.Second):
				t.Fatalf("no exit within 15 s of %v\n%s", tt.sig, stderr)
			}
			if got := cmd.ProcessState.ExitCode(); got != exitInterrupted {
				t.Fatalf("exit %d, want %d\n%s", got, exitInterrupted, stderr)
			}
			if want := tt.word + ": stopping the current trial"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
			if err != nil || !strings.Contains(res.Error, "interrupted") {
				t.Fatalf("partial results after %v: %v", tt.sig, err)
			}
			if res.Trials() < 1 {
				t.Errorf("partial results hold no trial")
			}
		})
	}
}
