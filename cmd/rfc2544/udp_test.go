package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/reports"
)

// udpLoopArgs is a short throughput run of the udp transport between two
// sockets on 127.0.0.1 (no DUT: the search must find the full "line rate"
// of 10 Mbit/s, 14 880 fps at 64 bytes, which loopback carries easily).
var udpLoopArgs = []string{"run", "--transport", "udp", "--addr-a", "127.0.0.1", "--addr-b", "127.0.0.1", "--line-rate", "10M",
	"--profile", "quick", "--sizes", "64,1518", "--tests", "throughput", "--duration", "300ms", "--settle", "50ms", "--learning", "0s", "--rest", "0s"}

func checkUDPLoopResults(t *testing.T, out string) {
	t.Helper()
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Tester.Transport != "udp" {
		t.Errorf("results: transport %q, want udp", res.Tester.Transport)
	}
	if len(res.Throughput) != 2 {
		t.Fatalf("got %d throughput results, want 2", len(res.Throughput))
	}
	for _, tp := range res.Throughput {
		// Loopback loses nothing but what the tester's own receiver drops
		// (a tester limit): the full line, or "≥ X" below it.
		if !tp.Found || tp.IntendedPercent < 99.9 && !tp.TesterLimited {
			t.Errorf("size %d: found %v at %.2f%%, tester-limited %v (%s), want 100%% of the 10 Mbit/s line rate or a tester limit", tp.FrameSize, tp.Found, tp.IntendedPercent, tp.TesterLimited, tp.Reason)
		}
		for _, tr := range tp.Trials {
			if p := tr.Result.Paths; p.Transport != "udp" || p.RX != "recvmmsg" {
				t.Errorf("size %d trial %d paths %+v, want the udp transport", tp.FrameSize, tr.Step, p)
			}
		}
	}
}

// TestRunUDPLoopback runs the udp transport from the command line between
// two addresses on loopback.
func TestRunUDPLoopback(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runCLI(t, context.Background(), append(udpLoopArgs, "--out", out)...)
	if err != nil && !errors.Is(err, errTesterLimited) {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr)
	}
	checkUDPLoopResults(t, out)
	if !strings.Contains(stderr, "side A: udp sockets 127.0.0.1/32") {
		t.Errorf("stderr does not describe the udp sides:\n%s", stderr)
	}
}

// TestRunUDPWithoutRoot runs the built command as an unprivileged user
// (setpriv to nobody): the udp transport between two addresses needs no
// privileges.
func TestRunUDPWithoutRoot(t *testing.T) {
	if os.Geteuid() != 0 || runtime.GOOS != "linux" {
		if os.Geteuid() != 0 {
			// Already unprivileged: TestRunUDPLoopback covers it.
			t.Skip("not root: TestRunUDPLoopback already runs without privileges")
		}
		t.Skip("setpriv is Linux only")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv not found (util-linux): %v", err)
	}
	dir, err := os.MkdirTemp("", "rfc2544-udp-noroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rfc2544")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(setpriv, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all", bin}, append(udpLoopArgs, "--out", out)...)...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	if ee := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitTesterLimited) {
		t.Fatalf("run as nobody: %v\n%s", err, b)
	}
	checkUDPLoopResults(t, out)
}
