package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/agent"
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
// takes 25–40 s of CI. Truth claim "tcp-cli".
func TestTCPSearchCLI(t *testing.T) {
	c := truth.New(t, "tcp-cli")
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
		addr, tok := serveLabAgent(t, st, agent.Policy{MaxRateBps: capBps, MaxDuration: time.Minute})
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
	if !strings.Contains(res.Plan.BottleneckSource, "UDP throughput search") {
		t.Errorf("bottleneck %.3f Mbit/s from %q, want the UDP throughput search's", res.Plan.BottleneckBps/1e6, res.Plan.BottleneckSource)
	}
	kase := fmt.Sprintf("%.1f Mbit/s, line %.0f Mbit/s, agent %v", float64(rateBps)/1e6, capBps/1e6, viaAgent)
	c.Ratio("bottleneck found / the shaper's", kase, want, res.Plan.BottleneckBps, 0.98, 1.01)
	if res.BaselineRTTNs <= 0 || res.PathMTU != 1500 {
		t.Errorf("baseline RTT %v, path MTU %d: want an RTT and the lab's 1500", time.Duration(res.BaselineRTTNs), res.PathMTU)
	}
	// The maximum for the shaper's true rate: the report's (MaxBps) is for
	// the bottleneck the search found, which may be up to 3 % low (the
	// window above), and TCP then gets more than "100 %" of it.
	trueMax := res.MaxBps * want / res.Plan.BottleneckBps
	c.Within("throughput, % of the RFC 6349 maximum at the shaper's rate", kase, 100*res.ThroughputBps/trueMax, 90, 101)
	c.Within("transfer time ratio", kase, res.TransferTimeRatio, 1, 1.15)
}

// TestTCPBothCLI: 'rfc2544 tcp --both' on a temporary lab whose kernel
// DUT shapes each direction to its own rate (20–100 Mbit/s each, drawn at
// test time), the far end drawn: the lab's namespace B ('tcp --lab
// --both'), or a real agent there ('tcp --agent --both' from namespace A,
// the bottleneck given with --bb, the higher of the two rates in the
// plan's terms). Both transfers run at once, each at most 101 % of RFC
// 6349's maximum for its own shaper; --json gives both results in order,
// each naming its direction, and --out a folder per direction. (That the
// transfers run at the same time is rfc2544's TestRunTCPTestBoth, and the
// agent's TestTCPAgentBothAtOnce.) One far end per run, for CI's time.
// Truth claim "tcp-both": each direction carries 20…101 % of its own
// shaper's maximum (ACKs of one cross the other's full queue, so neither
// need reach it), the better one at least 80 %.
func TestTCPBothCLI(t *testing.T) {
	c := truth.New(t, "tcp-both")
	needRoot(t)
	seed := testseed.Seed(t, "./cmd/rfc2544")
	rng := rand.New(rand.NewPCG(seed, 6349))
	ab := uint64(20e6+rng.Float64()*80e6) / 1000 * 1000
	ba := uint64(20e6+rng.Float64()*80e6) / 1000 * 1000
	viaAgent := rng.IntN(2) == 0
	t.Logf("seed %d: A to B shaped to %d bit/s, B to A to %d, through an agent %v", seed, ab, ba, viaAgent)
	out := filepath.Join(t.TempDir(), "tcp")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rates := []string{"--rate-ab", strconv.FormatUint(ab, 10), "--rate-ba", strconv.FormatUint(ba, 10)}
	args := append(append([]string{"tcp", "--lab"}, rates...), "--both", "--duration", "6s", "--json", "--out", out)
	// The plan's terms: L1 bits of frames whose IP packets plus 14 B the
	// shaper counts.
	planBps := func(r uint64) float64 { return float64(r) * 1538 / 1514 }
	bb := planBps(max(ab, ba))
	if viaAgent {
		sh := func(r uint64) lab.Shaping { return lab.Shaping{RateBps: r} }
		st := labtest.New(t, lab.Config{AtoB: sh(ab), BtoA: sh(ba)})
		addr, tok := serveLabAgent(t, st, agent.Policy{MaxRateBps: 1e9, MaxDuration: time.Minute})
		args = []string{"tcp", "--agent", addr, "--token-file", tok, "--netns", st.A.Namespace, "--both", "--bb", strconv.FormatFloat(bb, 'f', 0, 64),
			"--duration", "6s", "--json", "--out", out}
	}
	stdout, stderr, err := runCLI(t, ctx, args...)
	t.Logf("%v; stderr:\n%s", args, stderr)
	if !viaAgent {
		labGone(t, tempLabName())
	}
	if err != nil {
		t.Fatalf("tcp --both: %v", err)
	}
	var res []rfc2544.TCPResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || len(res) != 2 {
		t.Fatalf("%v: want a JSON array of 2 results\n%s", err, stdout)
	}
	best := 0.0
	for i, rate := range []uint64{ab, ba} {
		r := res[i]
		dir := []string{"A to B", "B to A"}[i]
		t.Logf("%s (%s): bottleneck %.3f Mbit/s (%s); throughput %.2f Mbit/s = %.1f %% of %.2f Mbit/s; TTR %.3f", dir, r.Direction,
			r.Plan.BottleneckBps/1e6, r.Plan.BottleneckSource, r.ThroughputBps/1e6, r.PercentOfMax, r.MaxBps/1e6, r.TransferTimeRatio)
		// The maximum for this direction's shaper (the report's is for
		// the bottleneck the plan has).
		ownMax := r.MaxBps
		if viaAgent {
			ownMax = r.MaxBps * planBps(rate) / r.Plan.BottleneckBps
			wantDir := []string{"-> agent", "agent "}[i]
			if r.Plan.BottleneckBps != math.Round(bb) || !strings.Contains(r.Plan.BottleneckSource, "--bb") ||
				!strings.Contains(r.Direction, wantDir) || !strings.Contains(r.Direction, "both directions") {
				t.Errorf("%s: bottleneck %.0f (%s), direction %q: want --bb's %.0f, and the direction named", dir, r.Plan.BottleneckBps,
					r.Plan.BottleneckSource, r.Direction, bb)
			}
		} else if r.Plan.BottleneckBps != float64(rate) || !strings.Contains(r.Plan.BottleneckSource, dir) || !strings.Contains(r.Direction, "both directions") {
			t.Errorf("%s: bottleneck %.0f (%s), direction %q: want the shaper's %d %s, and the direction named", dir, r.Plan.BottleneckBps,
				r.Plan.BottleneckSource, r.Direction, rate, dir)
		}
		// Each direction's ACKs cross the other direction's shaper and
		// queue, so neither need reach its maximum: measured 22–99 % of
		// it in 16 directions (2026-12-02; 22 % A to B at 92.7 Mbit/s
		// while B to A, 52.2 Mbit/s, kept its 1000-packet queue full:
		// the ACKs waited there). What holds: each carried traffic, and
		// none more than its own shaper allows.
		if len(r.Run.Samples) < 5 {
			t.Errorf("%s: %d samples, want one a second", dir, len(r.Run.Samples))
		}
		pc := 100 * r.ThroughputBps / ownMax
		best = max(best, pc)
		c.Within("each direction's throughput, % of its own RFC 6349 maximum", fmt.Sprintf("%s at %.1f Mbit/s, agent %v", dir, float64(rate)/1e6, viaAgent), pc, 20, 101)
		sub := []string{"a-to-b", "b-to-a"}[i]
		for _, f := range []string{"tcp.json", "report.txt", "samples.csv", "report.html"} {
			if _, err := os.Stat(filepath.Join(out, sub, f)); err != nil {
				t.Errorf("--out: %v", err)
			}
		}
	}
	c.Within("the better direction's throughput, % of its own RFC 6349 maximum", fmt.Sprintf("%.1f and %.1f Mbit/s, agent %v", float64(ab)/1e6, float64(ba)/1e6, viaAgent), best, 80, 101)
}
