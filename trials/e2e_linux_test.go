//go:build linux

package trials_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestThroughputSearchShaped runs rfc2544's throughput search on the real
// engine through a DUT shaped to R with a small queue (50 packets, a 3100 B
// bucket), R (20–59 Mbit/s), the frame size (one of RFC 2544's seven) and
// the transport (raw or udp) drawn at test time: the throughput must be
// within −3 % … +1 % of R in frames per second of the bytes the shaper
// counts (F − 4 per frame), not tester-limited. For udp R is at most
// 70 kfps: the search tries up to 1.2 R, and the udp receiver of this
// 2-CPU host fell behind from 109 kfps (CI on 2026-12-02). Both transports
// held to R is what the former TestUDPMatchesRawShaped (both searches, 2 %
// apart) checked at one rate in twice the time. The default queue's
// accuracy is TestSearchAccuracyDefaultQueue's. Truth claim
// "ndr-small-queue".
func TestThroughputSearchShaped(t *testing.T) {
	c := truth.New(t, "ndr-small-queue")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x5e))
	rateBps := float64(20e6 + rng.IntN(40)*1e6)
	f := []int{64, 128, 256, 512, 1024, 1280, 1518}[rng.IntN(7)]
	transport := []string{"raw", "udp"}[rng.IntN(2)]
	if transport == "udp" {
		rateBps = min(rateBps, 70e3*8*float64(f-4))
	}
	want := rateBps / (float64(f-4) * 8)
	t.Logf("seed %d: %s, shaped to %.0f bit/s (R = %.0f fps at %d B), queue 50 packets", seed, transport, rateBps, want, f)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: uint64(rateBps), BurstBytes: 3100, LimitPackets: 50}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	udp, raw := labTesters(t, st)
	var e rfc2544.Tester = raw
	if transport == "udp" {
		e = udp
	}
	r := &rfc2544.Runner{Tester: e, Plan: rfc2544.Plan{
		Profile:    rfc2544.ProfileQuick,
		Tests:      []rfc2544.Test{rfc2544.TestThroughput},
		FrameSizes: []int{f},
		// A "line" of twice R's frame rate: R is 50 % of it, and a
		// narrow range keeps the search to a few trials.
		LinkBps:    2 * want * float64(f+20) * 8,
		NoProbe:    true,
		Trial:      rfc2544.TrialConfig{Duration: rfc2544.Duration(2 * time.Second), Settle: rfc2544.Duration(300 * time.Millisecond)},
		Throughput: rfc2544.ThroughputConfig{ResolutionPercent: 0.25, InitialPercent: 60, MinPercent: 40, MaxPercent: 60, StartPercent: 40},
	}}
	// A search this host's stalls ended tester-limited (every limit a
	// stall, after the search's own retries) is run once more: CI on
	// 2026-12-02 met generator lags of 4.6, 30 and 20.5 ms within 15 s at
	// 99.6–100.1 % of R, where a 50-frame queue absorbs no catch-up, and
	// the search ended "≥ 99.64 %". A second such search fails.
	var res rfc2544.ThroughputResult
	for attempt := 1; ; attempt++ {
		var err error
		res, err = r.Throughput(ctx, f)
		if err != nil {
			t.Fatalf("throughput %d: %v", f, err)
		}
		for _, tr := range res.Trials {
			t.Logf("%s trial %d: intended %.0f offered %.0f fps (%.2f%% of R) loss %.3f%% %v %s%s", transport, tr.Step, tr.IntendedFPS, tr.OfferedFPS,
				100*tr.OfferedFPS/want, tr.LossPercent, tr.Outcome, tr.TesterLimitReason, tr.FailReason)
		}
		if attempt == 2 || !res.TesterLimited || !onlyStalls(res) {
			break
		}
		t.Logf("search %d ended tester-limited by this host's stalls alone (%s): running it again", attempt, res.TesterLimitReason)
	}
	t.Logf("%d B: throughput %.0f fps (%.2f%% of R = %.0f fps), tester-limited %v %s", f, res.FPS, 100*res.FPS/want, want,
		res.TesterLimited, res.TesterLimitReason)
	if !res.Found || res.TesterLimited {
		t.Fatalf("%d B: found %v, tester-limited %v (%s): want the DUT's throughput", f, res.Found, res.TesterLimited, res.Reason)
	}
	c.Ratio("throughput / R", fmt.Sprintf("%s, %d B at %.1f Mbit/s, 50-packet queue", transport, f, rateBps/1e6), want, res.FPS, 0.97, 1.01)
}

// TestThroughputSearchUnshaped: through an unshaped kernel DUT at 64 B and a
// nominal 10 Gbit/s line (14.9 Mfps, far above what either the tester or
// the DUT carries here, both about 0.6 Mfps), the search must end at
// whichever limit is lower, named: found and flagged tester-limited ("≥ X")
// when the tester's is, or, when the DUT's is, found unflagged with a trial
// above the result that the DUT failed (lost frames or did not sustain,
// the tester keeping up) or a pass at the load the DUT accepted while its
// ingress held the tester back (flow-controlled); never above what the
// engine offered, never empty. All three happen on this 2-CPU box since
// the raw receive loop's priority change: CI on 2026-12-02 (ci63) failed a
// trial at 590,291 fps offered on the DUT's loss alone and found 582,265;
// a run here found 711,496, the load the DUT accepted of 731,803. A tester
// limit never ends a search empty (issue 12: needs the search of helper
// mlr). A trial failed on the DUT's loss is one in which the DUT's own
// counters dropped frames (its ingress backlog, or its egress towards B).
func TestThroughputSearchUnshaped(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := trials.Open(ctx, trials.Config{A: pc(st.A), B: pc(st.B)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the engine: %v", err)
		}
	})
	counted := &dutDrops{st: st, next: e}
	r := &rfc2544.Runner{Tester: counted, Plan: rfc2544.Plan{
		Profile:    rfc2544.ProfileQuick,
		Tests:      []rfc2544.Test{rfc2544.TestThroughput},
		FrameSizes: []int{64},
		LinkBps:    10e9,
		NoProbe:    true,
		Trial:      rfc2544.TrialConfig{Duration: rfc2544.Duration(time.Second), Settle: rfc2544.Duration(200 * time.Millisecond)},
		Throughput: rfc2544.ThroughputConfig{ResolutionPercent: 0.1},
	}}
	res, err := r.Throughput(ctx, 64)
	if err != nil {
		t.Fatal(err)
	}
	maxOffered := 0.0
	var dutFailed *rfc2544.TrialRecord // a trial above the result the DUT failed
	var heldBack *rfc2544.TrialRecord  // a pass at what the DUT accepted, pushing back
	for i, tr := range res.Trials {
		t.Logf("trial %d: intended %.0f offered %.0f fps, loss %.4f%%, %v %s%s", tr.Step, tr.IntendedFPS, tr.OfferedFPS, tr.LossPercent, tr.Outcome,
			tr.TesterLimitReason, tr.FailReason)
		for _, s := range tr.Result.Streams {
			maxOffered = max(maxOffered, s.OfferedFPS)
		}
		if tr.Outcome == rfc2544.OutcomeFail && !tr.Result.TesterLimited && tr.IntendedFPS > res.FPS && (tr.LossPercent > 0 || tr.FailReason != "") {
			dutFailed = &res.Trials[i]
		}
		if tr.Outcome == rfc2544.OutcomePass && tr.Result.FlowControlled && !tr.Result.TesterLimited && tr.OfferedFPS < 0.99*tr.IntendedFPS {
			heldBack = &res.Trials[i]
		}
	}
	t.Logf("throughput %.0f fps found %v tester-limited %v (%s); most offered in any trial %.0f fps", res.FPS, res.Found,
		res.TesterLimited, res.TesterLimitReason, maxOffered)
	switch {
	case !res.Found:
		t.Errorf("no throughput found (%s): a tester limit or a DUT limit must still give one", res.Reason)
	case !res.TesterLimited && dutFailed == nil && heldBack == nil:
		t.Errorf("throughput %.0f fps not flagged tester-limited, no trial above it failed on the DUT, none was held back by it: want '≥ X (tester-limited)' or the DUT's limit shown by a trial", res.FPS)
	case !res.TesterLimited && dutFailed == nil:
		t.Logf("the DUT's limit: trial %d passed at the %.0f fps it accepted of %.0f intended, holding the tester back (%s)", heldBack.Step,
			heldBack.OfferedFPS, heldBack.IntendedFPS, heldBack.Result.FlowControlReason)
	case !res.TesterLimited:
		t.Logf("the DUT's limit: trial %d at %.0f fps offered failed (loss %.4f%% %s), the tester keeping up", dutFailed.Step, dutFailed.OfferedFPS,
			dutFailed.LossPercent, dutFailed.FailReason)
	}
	if dutFailed != nil && dutFailed.LossPercent > 0 {
		for _, k := range counted.trials {
			if k.fps == dutFailed.IntendedFPS && k.dropped == 0 {
				t.Errorf("trial %d at %.0f fps failed on the DUT's loss (%d frames), but the DUT's counters dropped none", dutFailed.Step, k.fps, k.lost)
			}
		}
	}
	if res.FPS <= 0 || res.FPS > maxOffered*1.001 {
		t.Errorf("throughput %.0f fps, want above 0 and at most the most the engine offered (%.0f fps)", res.FPS, maxOffered)
	}
}

// dutDrops runs trials on next and keeps, per trial, the frames lost and
// those the lab's kernel DUT dropped: at its ingress (its A port's
// rx_dropped: a full backlog; frames the tester's sender was refused count
// there too) and at its egress towards B (its B port's tx_dropped).
type dutDrops struct {
	st     *lab.State
	next   rfc2544.Tester
	trials []struct {
		fps           float64
		lost, dropped uint64
	}
}

func (d *dutDrops) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	before, err := d.st.DUTCounters()
	if err != nil {
		return trials.Result{}, err
	}
	r, err := d.next.Run(ctx, spec)
	after, cerr := d.st.DUTCounters()
	if err != nil || cerr != nil {
		return r, errors.Join(err, cerr)
	}
	var lost uint64
	for _, s := range r.Streams {
		lost += s.Lost
	}
	dropped := after.DutA.RxDropped - before.DutA.RxDropped + after.DutB.TxDropped - before.DutB.TxDropped
	d.trials = append(d.trials, struct {
		fps           float64
		lost, dropped uint64
	}{spec.RateFPS, lost, dropped})
	return r, nil
}

// onlyStalls reports whether every tester-limited trial a search kept was
// a stall of this host (transient).
func onlyStalls(res rfc2544.ThroughputResult) bool {
	for _, tr := range res.Trials {
		if tr.Outcome == rfc2544.OutcomeTesterLimited && !tr.Result.TesterLimitTransient {
			return false
		}
	}
	return true
}
