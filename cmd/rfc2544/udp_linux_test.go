//go:build linux

package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/rfc2544/rfc2544/internal/pending"
	"github.com/rfc2544/rfc2544/reports"
)

// TestRunUDPTemporaryLab runs the short shaped throughput run of e2eArgs with
// --transport udp: kernel sockets in the lab's tester namespaces find the
// DUT's shaped rate like the raw engine does.
func TestRunUDPTemporaryLab(t *testing.T) {
	pending.Skip(t, 18, "held to -3 %…+1 % of R through a 10-packet queue: on a quiet box on 2026-12-01 three runs passed (98.6-100.1 % of R); CI earlier that day found 96.97 % (9.4 % lost at 98.95 % of R), and on a loaded box a search stopped at the trial cap between tester limits (since a150fd2 reported as tester-limited, not as the DUT's 46 % of R)")
	needRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runCLI(t, context.Background(), append(e2eArgs, "--transport", "udp", "--out", out)...)
	if err != nil {
		t.Fatalf("run: %v (exit %d)\nstderr:\n%s", err, exitCode(err, io.Discard), stderr)
	}
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkShapedThroughput(t, res)
	if res.Tester.Transport != "udp" {
		t.Errorf("results: transport %q, want udp", res.Tester.Transport)
	}
	for _, tp := range res.Throughput {
		t.Logf("size %d: %.0f fps (%s)", tp.FrameSize, tp.FPS, tp.Reason)
	}
	labGone(t, tempLabName())
}
