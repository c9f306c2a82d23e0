//go:build linux

package trials_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestXDPSearchAccuracy: the quick profile's throughput search over the xdp
// transport, through a DUT shaped (lab defaults) to a rate R drawn now
// (20–150 Mbit/s, 512 or 1518 B; RFC2544_SEED replays), finds R within
// −3 % … +1 %, not tester-limited. The number of queues per port is drawn
// too, 1 or 2 (Config.Queues, the lab's veths made with as many; 2 is the
// most this 2-CPU box measures): in every paced trial each of port A's
// queues sent its share of the stream (per-queue socket counters, read
// around each trial). One search per run, its queue count drawn, keeps CI
// in its 15 minutes (two searches took 40 s). Truth claim "ndr-xdp".
func TestXDPSearchAccuracy(t *testing.T) {
	c := truth.New(t, "ndr-xdp")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x2544))
	queues := 1 + rng.IntN(2)
	f := []int{512, 1518}[rng.IntN(2)]
	rateBps := uint64(20e6+rng.Float64()*130e6) / 1000 * 1000
	want := float64(rateBps) / (8 * float64(f-4))
	t.Logf("seed %d: %d B through a DUT shaped to %d bit/s: R = %.0f fps, %d queues per port", seed, f, rateBps, want, queues)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}, Queues: queues})
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4}
	}
	tc := trials.Config{A: pc(st.A), B: pc(st.B), Queues: queues, TxCPU: st.TesterCPU()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := trials.OpenXDP(ctx, tc)
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the xdp engine: %v", err)
		}
	})
	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []rfc2544.Test{rfc2544.TestThroughput}, []int{f}, 1e9, true
	qc := &queueCounted{e: e}
	r := &rfc2544.Runner{Tester: qc, Plan: plan}
	res, err := r.Throughput(ctx, f)
	if err != nil {
		t.Fatalf("throughput %d B: %v", f, err)
	}
	for _, tr := range res.Trials {
		t.Logf("trial %d (%s, %.2g s): intended %.0f offered %.0f fps (%.2f%% of R), loss %.3f%%, %v %s%s", tr.Step, tr.Goal, tr.DurationS,
			tr.IntendedFPS, tr.OfferedFPS, 100*tr.OfferedFPS/want, tr.LossPercent, tr.Outcome, tr.TesterLimitReason, tr.FailReason)
	}
	t.Logf("%d B: throughput %.0f fps = %.2f%% of R, found %v, tester-limited %v %s", f, res.FPS, 100*res.FPS/want, res.Found, res.TesterLimited, res.TesterLimitReason)
	t.Logf("paths %s", e.Paths().XDP)
	var paced int
	for i, tr := range qc.trials {
		if len(tr.sent) != queues {
			t.Errorf("trial %d: %d queues on port A, want %d", i+1, len(tr.sent), queues)
			continue
		}
		total := sumOf(tr.sent)
		for q := range tr.sent {
			// A paced trial gives queue q its share of the stream, ±1
			// frame; one that was not still sends on every queue. CI on
			// 2026-12-02: the search's first trial, at 33 × R, offered
			// 181 of 235 kfps intended (the DUT overloaded), split
			// 50.8/49.2.
			short := float64(tr.sent[q]) < float64(total)/float64(queues)-1
			if tr.sent[q] == 0 || (short && !tr.unpaced) {
				t.Errorf("trial %d (unpaced %v): queue %d of port A sent %d of %d frames (per queue %v; port B received per queue %v): want its 1/%d share",
					i+1, tr.unpaced, q, tr.sent[q], total, tr.sent, tr.rcvd, queues)
			}
		}
		if !tr.unpaced {
			paced++
		}
	}
	if paced == 0 {
		t.Errorf("no trial of the search was paced: the queues' shares were not checked")
	}
	if !res.Found || res.TesterLimited {
		t.Fatalf("%d B at R = %d bit/s: found %v, tester-limited %v (%s): want the DUT's throughput", f, rateBps, res.Found, res.TesterLimited, res.Reason)
	}
	c.Ratio("throughput / R", fmt.Sprintf("xdp, %d queues, %d B at %.1f Mbit/s", queues, f, float64(rateBps)/1e6), want, res.FPS, 0.97, 1.01)
}

func sumOf(v []uint64) (n uint64) {
	for _, x := range v {
		n += x
	}
	return n
}

// queueCounted runs each trial of a search between two readings of port
// A's per-queue transmit counters (and port B's receive counters), so the
// queues' shares are checked trial by trial.
type queueCounted struct {
	e      *trials.XDPEngine
	trials []queueTrial
}

type queueTrial struct {
	sent, rcvd []uint64
	// unpaced: the generator fell short of the trial's rate (a tester
	// limit, the path holding it back, or a DUT overloaded whatever the
	// shortfall), so each queue's thread sent what it could.
	unpaced bool
}

func (c *queueCounted) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	s0, r0, err := c.e.QueueCounts()
	if err != nil {
		return trials.Result{}, err
	}
	res, err := c.e.Run(ctx, spec)
	if err != nil {
		return res, err
	}
	s1, r1, err := c.e.QueueCounts()
	if err != nil {
		return res, err
	}
	var qt queueTrial
	for q := range s1[0] {
		qt.sent = append(qt.sent, s1[0][q]-s0[0][q])
	}
	for q := range r1[1] {
		qt.rcvd = append(qt.rcvd, r1[1][q]-r0[1][q])
	}
	qt.unpaced = res.TesterLimited || res.FlowControlled || res.OverloadReason != ""
	c.trials = append(c.trials, qt)
	return res, nil
}
