package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/reports"
)

// TestFirewallSweep: one command (throughput --lab --fw-rules-sweep a,b)
// runs the search on a temporary lab per rule count (a drawn at 100–300, b
// at 2000–5000 at test time) and compares them: each count's results, the
// table, the JSON and the chart are written, each throughput is the DUT's
// (not tester-limited), and the DUT with b rules carries less than with a.
// Truth claim "firewall-sweep" (a search on each of two DUTs, the order of
// their capacities).
func TestFirewallSweep(t *testing.T) {
	c := truth.New(t, "firewall-sweep")
	needRoot(t)
	rng := rand.New(rand.NewPCG(testseed.Seed(t, "./cmd/rfc2544"), 0))
	a, b := 100+rng.IntN(201), 2000+rng.IntN(3001)
	t.Logf("%d and %d rules", a, b)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"throughput", "--lab", "--fw-rules-sweep", fmt.Sprintf("%d,%d", a, b), "--sizes", "512",
		"--duration", "500ms", "--settle", "100ms", "--out", out}, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, stdout.String())
	}
	for _, f := range []string{fmt.Sprintf("fw-rules-%d/results.json", a), fmt.Sprintf("fw-rules-%d/results.json", b),
		"compare.txt", "compare.json", "compare-throughput.svg", "compare-throughput.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (want a non-empty file)", f, err)
		}
	}
	txt, _ := os.ReadFile(filepath.Join(out, "compare.txt"))
	t.Logf("compare.txt:\n%s", txt)
	raw, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rs reports.Runs
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatalf("compare.json: %v", err)
	}
	if len(rs.Runs) != 2 || len(rs.Sizes) != 1 || rs.Sizes[0] != 512 || len(rs.FPS) != 2 {
		t.Fatalf("compare.json: %d runs, sizes %v: want 2 runs of 512 B", len(rs.Runs), rs.Sizes)
	}
	var fps [2]float64
	for i, row := range rs.FPS {
		v := row[0]
		if v.V == nil || v.AtLeast {
			t.Fatalf("run %d (%d rules): throughput %+v: want the DUT's", i, []int{a, b}[i], v)
		}
		fps[i] = *v.V
	}
	c.Within("throughput with more rules / with fewer", fmt.Sprintf("%d vs %d rules, 512 B", b, a), fps[1]/fps[0], 0, 0.999)
}
