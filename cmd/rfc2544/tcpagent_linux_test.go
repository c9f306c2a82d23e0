package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/pending"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
)

// TestTCPAgentCLI: 'rfc2544 tcp --agent' from the lab's namespace A against
// a real agent in namespace B, through the kernel DUT shaped to R (20–100
// Mbit/s, drawn at test time; the relay's delay is
// TestAgentTCPRFC6349Lab's), without --bb: the bottleneck comes from the
// UDP throughput search through the agent at 1518 B, which must find R as
// the plan counts it (L1 bits of frames whose IP packets plus 14 B the
// shaper counts: R × 1538 / 1514), −3 % … +1.5 % (the lab's 1000-packet
// tbf queue absorbs a load a little above R for a 1-s trial: measured
// +0.4 … +1.15 % in four runs, see TCPBottleneckConfig); then the transfer reaches
// 90…101 % of RFC 6349's maximum with a transfer time ratio of at most
// 1.15, as TestTCPRFC6349Lab asks.
func TestTCPAgentCLI(t *testing.T) {
	pending.Skip(t, 16, "the bottleneck search through the agent (no --bb) lost the agent in 1 of 5 runs with 1 s trials and 2 of 3 with 2 s trials: its overload trials fill the path the control session crosses (2026-12-01); found rates were +0.61 to +1.15 % of the shaper")
	needRoot(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 6349))
	rateBps := uint64(20e6+rng.Float64()*80e6) / 1000 * 1000
	t.Logf("seed %d: shaped to %d bit/s each way", seed, rateBps)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}, BtoA: lab.Shaping{RateBps: rateBps}})
	dir := t.TempDir()
	tok := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	token, err := agent.LoadToken(tok)
	if err != nil {
		t.Fatal(err)
	}
	addr := agenttest.Serve(t, st.B.Namespace, st.B.IPv4.Addr(), token, agent.Policy{MaxRateBps: 1e9, MaxDuration: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stdout, stderr, err := runCLI(t, ctx, "tcp", "--agent", addr, "--token-file", tok, "--netns", st.A.Namespace, "--duration", "6s", "--json")
	t.Logf("stderr:\n%s", stderr)
	if err != nil {
		t.Fatalf("tcp --agent: %v", err)
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
	if !strings.Contains(res.Plan.BottleneckSource, "UDP throughput search") || res.Plan.BottleneckBps < 0.97*want || res.Plan.BottleneckBps > 1.015*want {
		t.Errorf("bottleneck %.3f Mbit/s (%s), want the shaper's %.3f Mbit/s −3 %% … +1.5 %%", res.Plan.BottleneckBps/1e6, res.Plan.BottleneckSource, want/1e6)
	}
	if res.BaselineRTTNs <= 0 || res.PathMTU != 1500 {
		t.Errorf("baseline RTT %v, path MTU %d: want an RTT and the lab's 1500", time.Duration(res.BaselineRTTNs), res.PathMTU)
	}
	if res.PercentOfMax < 90 || res.PercentOfMax > 101 || res.TransferTimeRatio > 1.15 {
		t.Errorf("throughput %.1f %% of the RFC 6349 maximum (want 90…101 %%), transfer time ratio %.3f (want at most 1.15)", res.PercentOfMax, res.TransferTimeRatio)
	}
}
