//go:build linux

package agent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
	"github.com/rfc2544/rfc2544/trials/trialstest"
)

// TestAgentTCPRFC6349Lab is TestTCPRFC6349Lab (package trials) through the
// agent: the relay DUT shaped to R (drawn at test time, 20–100 Mbit/s)
// with a one-way delay D (5–15 ms), the controller in namespace A and a
// real agent in namespace B, the RFC 6349 steps over the session, to the
// agent or from it (--reverse; drawn per run, as R and D are: each
// direction takes 15 s of CI's 15 minutes). The windows are the local test's: the
// idle RTT is 2D (+2 ms at most), windows sized from the BDP reach
// 90…101 % of RFC 6349's maximum for the MSS with a transfer time ratio of
// at most 1.15, and a window below the BDP gives the window (as the
// receiver advertised it) over the RTT the lab sets within 10 % (and the
// relay's own delay). Truth claim "tcp-rfc6349".
func TestAgentTCPRFC6349Lab(t *testing.T) {
	claim := truth.New(t, "tcp-rfc6349")
	seed := testseed.Seed(t, "./trials/agent")
	rng := rand.New(rand.NewPCG(seed, 6349))
	st, rateBps, delay := trialstest.RelayTCPLab(t, rng)
	reverse := rng.IntN(2) == 1
	t.Logf("seed %d: reverse %v", seed, reverse)
	addr := agenttest.Serve(t, st.B.Namespace, st.B.IPv4.Addr(), token, agent.Policy{MaxRateBps: 1e9, MaxDuration: time.Minute})
	c := labDial(t, st, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	{
		name := map[bool]string{false: "to the agent", true: "from the agent"}[reverse]
		tt := &agent.TCPTester{Client: c, Namespace: st.A.Namespace, Reverse: reverse}
		plan := rfc2544.TCPPlan{BottleneckBps: float64(rateBps), OverheadBytes: rfc2544.LabShaperOverhead, Duration: rfc2544.Duration(8 * time.Second), RTTProbes: 20}
		res, err := rfc2544.RunTCPTest(ctx, tt, plan)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rtt := time.Duration(res.BaselineRTTNs)
		t.Logf("%s: path MTU %d, MSS %d, baseline RTT %v (mean %v), BDP %.0f B, window %d × %d (%s)", name, res.PathMTU, res.MSSBytes, rtt,
			time.Duration(res.BaselineMeanNs), res.BDPBytes, res.WindowBytes, res.Streams, res.WindowSource)
		t.Logf("%s: throughput %.2f Mbit/s = %.1f %% of the maximum %.2f Mbit/s (%s); TTR %.3f, efficiency %.2f %%, buffer delay %.1f %%, %d bytes in %.2f s",
			name, res.ThroughputBps/1e6, res.PercentOfMax, res.MaxBps/1e6, res.MaxFormula, res.TransferTimeRatio, res.EfficiencyPercent, res.BufferDelayPercent,
			res.Run.Bytes, res.Run.Seconds)
		for _, s := range res.Run.Samples {
			t.Logf("  %.1f s: %.2f Mbit/s, rtt %v, cwnd %d B, peer window %d B, retrans %d B", s.AtS, s.Bps/1e6, time.Duration(s.RTTNs), s.CwndBytes, s.PeerWindowBytes, s.RetransBytes)
		}
		trialstest.TCPClaims(claim, "agent "+name+": ", fmt.Sprintf("%.1f Mbit/s, D %v", float64(rateBps)/1e6, delay), res.BaselineRTTNs, delay, res.PercentOfMax, res.TransferTimeRatio)
		if res.EfficiencyPercent < 0 || len(res.Run.Samples) < 7 {
			t.Errorf("%s: efficiency %.2f %%, %d samples: want the sender's TCP_INFO (from the agent too)", name, res.EfficiencyPercent, len(res.Run.Samples))
		}

		// A window below the BDP: the window that ran over the RTT the
		// transfer saw (TCPRun.WindowBps; the relay adds 0.6-2 ms under
		// load, 2026-12-01), within 10 %.
		run, err := tt.RunTCP(ctx, int(res.BDPBytes/4), 1, 6*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		trialstest.CheckWindowBound(claim, t, "agent "+name+": ", run, res.BDPBytes, delay)
	}
}
