//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/reports"
)

// TestRunUDPTemporaryLab runs the short shaped throughput run of e2eArgs with
// --transport udp: kernel sockets in the lab's tester namespaces find the
// DUT's shaped rate like the raw engine does, within −3 % … +1 %, not
// tester-limited. Truth claim "ndr-cli".
func TestRunUDPTemporaryLab(t *testing.T) {
	c := truth.New(t, "ndr-cli")
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
	for _, tp := range res.Throughput {
		if tp.Found && !tp.TesterLimited {
			c.Ratio("throughput / R", fmt.Sprintf("udp, %d B at 200 Mbit/s, 200-packet queue", tp.FrameSize), 200e6/float64((tp.FrameSize-4)*8), tp.FPS, 0.97, 1.01)
		}
	}
	if res.Tester.Transport != "udp" {
		t.Errorf("results: transport %q, want udp", res.Tester.Transport)
	}
	for _, tp := range res.Throughput {
		t.Logf("size %d: %.0f fps (%s)", tp.FrameSize, tp.FPS, tp.Reason)
	}
	labGone(t, tempLabName())
}
