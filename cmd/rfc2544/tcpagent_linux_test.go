package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
)

// TestTCPSearchCLI: 'rfc2544 tcp' without a bottleneck given, through the
// lab's kernel DUT shaped to R (20–100 Mbit/s, drawn at test time; the
// relay's delay is TestAgentTCPRFC6349Lab's), the far end drawn: a real
// agent in namespace B ('tcp --agent' from namespace A), or the lab's
// namespaces themselves ('tcp --lab --bb search'). The bottleneck comes
// from the UDP throughput search at 1518 B (through the agent, or between
// the lab's two ends), which must find R as the plan counts it (L1 bits
// of frames whose IP packets plus 14 B the shaper counts: R × 1538 / 1514),
// −2 % … +1 %, the quick profile's accuracy goal (it is that profile's
// search; its binary search with 1 s trials found +0.4 … +1.73 %, see
// TCPBottleneckConfig, and lost the agent now and then until a
// receive-only agent kept quiet while the overload trials filled the path
// its control connection crosses); then the transfer reaches 90…101 % of
// RFC 6349's maximum at the shaper's rate with a transfer time ratio of at
// most 1.15, as TestTCPRFC6349Lab asks. One far end per run: each run
// takes 25–40 s of CI.
func TestTCPSearchCLI(t *testing.T) {
	needRoot(t)
	seed := testseed.Seed(t, "./cmd/rfc2544")
	rng := rand.New(rand.NewPCG(seed, 6349))
	rateBps := uint64(20e6+rng.Float64()*80e6) / 1000 * 1000
	// The search's line (the agent's --max-rate, or --line-rate): drawn
	// from 2 R to 1 Gbit/s on a log scale (a bottleneck 2–50 % of the
	// line), so a run tries a narrow search as often as a wide one (at 1
	// Gbit/s it took up to 40 trials, 42 s of CI).
	capBps := math.Round(2 * float64(rateBps) * math.Pow(1e9/(2*float64(rateBps)), rng.Float64()))
	viaAgent := rng.IntN(2) == 0
	t.Logf("seed %d: shaped to %d bit/s each way, the search's line %.0f bit/s, through an agent %v", seed, rateBps, capBps, viaAgent)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}, BtoA: lab.Shaping{RateBps: rateBps}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{"tcp", "--lab", st.Name, "--bb", "search", "--line-rate", strconv.FormatFloat(capBps, 'f', 0, 64), "--duration", "6s", "--json"}
	if viaAgent {
		dir := t.TempDir()
		tok := filepath.Join(dir, "agent.token")
		if err := os.WriteFile(tok, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		token, err := agent.LoadToken(tok)
		if err != nil {
			t.Fatal(err)
		}
		addr := agenttest.Serve(t, st.B.Namespace, st.B.IPv4.Addr(), token, agent.Policy{MaxRateBps: capBps, MaxDuration: time.Minute})
		args = []string{"tcp", "--agent", addr, "--token-file", tok, "--netns", st.A.Namespace, "--duration", "6s", "--json"}
	}
	stdout, stderr, err := runCLI(t, ctx, args...)
	t.Logf("%v; stderr:\n%s", args, stderr)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var res rfc2544.TCPResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	want := float64(rateBps) * 1538 / 1514
	t.Logf("bottleneck %.3f Mbit/s (%s), R in the plan's terms %.3f Mbit/s (%.2f %%)", res.Plan.BottleneckBps/1e6, res.Plan.BottleneckSource, want/1e6,
		100*res.Plan.BottleneckBps/want)
	t.Logf("baseline RTT %v, BDP %.0f B, window %d × %d; throughput %.2f Mbit/s = %.1f %% of %.2f Mbit/s (%s); TTR %.3f, efficiency %.2f %%, buffer delay %.1f %%",
		time.Duration(res.BaselineRTTNs), res.BDPBytes, res.WindowBytes, res.Streams, res.ThroughputBps/1e6, res.PercentOfMax, res.MaxBps/1e6, res.MaxFormula,
		res.TransferTimeRatio, res.EfficiencyPercent, res.BufferDelayPercent)
	if !strings.Contains(res.Plan.BottleneckSource, "UDP throughput search") || res.Plan.BottleneckBps < 0.98*want || res.Plan.BottleneckBps > 1.01*want {
		t.Errorf("bottleneck %.3f Mbit/s (%s), want the shaper's %.3f Mbit/s −2 %% … +1 %%", res.Plan.BottleneckBps/1e6, res.Plan.BottleneckSource, want/1e6)
	}
	if res.BaselineRTTNs <= 0 || res.PathMTU != 1500 {
		t.Errorf("baseline RTT %v, path MTU %d: want an RTT and the lab's 1500", time.Duration(res.BaselineRTTNs), res.PathMTU)
	}
	// The maximum for the shaper's true rate: the report's (MaxBps) is for
	// the bottleneck the search found, which may be up to 3 % low (the
	// window above), and TCP then gets more than "100 %" of it.
	trueMax := res.MaxBps * want / res.Plan.BottleneckBps
	if pc := 100 * res.ThroughputBps / trueMax; pc < 90 || pc > 101 || res.TransferTimeRatio > 1.15 {
		t.Errorf("throughput %.1f %% of the RFC 6349 maximum at the shaper's rate (%.2f Mbit/s; want 90…101 %%), transfer time ratio %.3f (want at most 1.15)",
			pc, trueMax/1e6, res.TransferTimeRatio)
	}
}
