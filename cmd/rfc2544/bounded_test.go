package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/reports"
)

// runWithin runs the CLI in this process and fails the test if it takes
// longer than d (a read that blocks or never ends).
func runWithin(t *testing.T, d time.Duration, args ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, _, err := runCLI(t, context.Background(), args...)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s: no answer within %v", strings.Join(args, " "), d)
		return nil
	}
}

// TestBoundedInputs: plan, results and calibration files are read only when
// they are regular files of a bounded size, so /dev/zero, a FIFO or a huge
// file gets a clear error at once instead of hanging or eating memory; and
// an error quotes at most about 100 bytes of a bad value (issue 17 item 9).
func TestBoundedInputs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bigPlan := filepath.Join(dir, "big.yaml")
	os.WriteFile(bigPlan, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o644)
	bigResults := filepath.Join(dir, "big.json")
	f, _ := os.Create(bigResults)
	f.Truncate(reports.MaxResultsBytes + 1) // sparse: costs no disk
	f.Close()
	long := strings.Repeat("y", 500<<10)
	longValue := filepath.Join(dir, "long-value.yaml")
	os.WriteFile(longValue, []byte("trial:\n  duration: "+long+"\n"), 0o644)
	longKey := filepath.Join(dir, "long-key.yaml")
	os.WriteFile(longKey, []byte("? "+long+"\n: 1\n"), 0o644)
	longSearch := filepath.Join(dir, "long-search.yaml")
	os.WriteFile(longSearch, []byte("throughput:\n  search: "+long+"\n"), 0o644)
	sim := []string{"run", "--transport", "sim", "--out", filepath.Join(dir, "out")}

	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"plan /dev/zero", append(sim, "--plan", "/dev/zero"), exitUsage, []string{"--plan /dev/zero", "not a regular file", "character device"}},
		{"plan fifo", append(sim, "--plan", fifo), exitUsage, []string{"--plan", "named pipe"}},
		{"plan folder", append(sim, "--plan", dir), exitUsage, []string{"--plan", "a folder"}},
		{"plan over 1 MiB", append(sim, "--plan", bigPlan), exitUsage, []string{"--plan", "1 MiB"}},
		{"report /dev/zero", []string{"report", "/dev/zero"}, exitTestError, []string{"/dev/zero", "not a regular file"}},
		{"report fifo", []string{"report", fifo}, exitTestError, []string{"named pipe"}},
		{"report over the limit", []string{"report", bigResults}, exitTestError, []string{"big.json", "256 MiB"}},
		{"compare /dev/zero", []string{"compare", "/dev/zero", bigResults}, exitTestError, []string{"/dev/zero", "not a regular file"}},
		{"calibration /dev/zero", []string{"run", "--lab", "--calibration", "/dev/zero"}, exitUsage, []string{"--calibration", "not a regular file"}},
		{"long plan value", append(sim, "--plan", longValue), exitUsage, []string{"trial.duration", "512000 bytes"}},
		{"long plan key", append(sim, "--plan", longKey), exitUsage, []string{"unknown field", "512000 bytes"}},
		{"long plan search", append(sim, "--plan", longSearch), exitUsage, []string{"throughput.search", "512000 bytes"}},
		{"long --sizes", append(sim, "--sizes", "64,"+long), exitUsage, []string{"--sizes", "bytes)"}},
		{"long --duration", append(sim, "--duration", long), exitUsage, []string{"--duration", "bytes)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forbidTraffic(t)
			err := runWithin(t, 5*time.Second, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if got := exitCode(err, io.Discard); got != tt.code {
				t.Errorf("exit %d, want %d: %.300v", got, tt.code, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %.300v", w, err)
				}
			}
			if n := len(err.Error()); n > 600 {
				t.Errorf("error is %d bytes long, want a short quote of the bad value: %.300v", n, err)
			}
		})
	}
}
