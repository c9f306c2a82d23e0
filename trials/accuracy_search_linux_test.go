//go:build linux

package trials_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestSearchAccuracyDefaultQueue is the acceptance test of issue 12's
// accuracy goal (issue 18, item 1): the throughput SEARCH of the quick
// profile, on the lab's DEFAULT shaping (a 1000-packet queue and a 10 ms
// token bucket, as a user gets with `rfc2544 lab up --rate R`), must find
// the tbf rate R/(8·(F−4)) fps within −2 % … +1 %, not tester-limited.
//
// On ce6ef8b a 1 s trial filled the default queue and passed ~19 % above R
// at large sizes, and at low rates the resolution (points of the nominal
// 1 Gbit/s line) was coarser than the window; with 1 s final trials the
// 10 ms bucket alone hides +1 %. What holds it now: mlr's relative width,
// the sustained-rate verdict, and the quick profile's 2 s final trials.
//
// One draw per run (two took 22-59 s of CI's 15 minutes; CI runs it many
// times a day, each with a new seed): R uniform in 10–500 Mbit/s (at
// most accuracyMaxFPS at the size drawn) and F one of the seven RFC 2544
// sizes, 64 B included (where a 4-byte accounting error is 6 %), or a jumbo
// size (4096, 9018 B, through 9000-byte MTUs). One run in three the DUT
// is the relay instead, shaping to R with its default 1000-frame queue and
// a one-way delay D drawn from 1–15 ms (the lab's only DUT with a delay:
// this kernel has no netem), R at most relayMaxFPS and 200 Mbit/s, F one
// of the RFC 2544 sizes. The seed is logged; RFC2544_SEED=N replays a
// failure. Truth claim "ndr-default-queue".
func TestSearchAccuracyDefaultQueue(t *testing.T) {
	c := truth.New(t, "ndr-default-queue")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x2544))
	sizes := append(slices.Clone(rfc2544.DefaultFrameSizes), 4096, 9018) // jumbo through 9000-byte MTUs
	f := sizes[rng.IntN(len(sizes))]
	maxBps := min(500e6, accuracyMaxFPS*8*float64(f-4))
	rateBps := uint64(10e6+rng.Float64()*(maxBps-10e6)) / 1000 * 1000
	if rng.IntN(3) == 0 {
		f = rfc2544.DefaultFrameSizes[rng.IntN(len(rfc2544.DefaultFrameSizes))]
		maxBps = min(200e6, relayMaxFPS*8*float64(f-4))
		lo := min(10e6, maxBps/2)
		rateBps = uint64(lo+rng.Float64()*(maxBps-lo)) / 1000 * 1000
		delay := time.Duration(1+rng.IntN(15)) * time.Millisecond
		t.Logf("the relay DUT with a %v delay each way", delay)
		searchShaped(t, c, fmt.Sprintf("relay, D %v", delay), f, rateBps, lab.Config{DUT: lab.DUTRelay, Delay: delay, AtoB: lab.Shaping{RateBps: rateBps}})
		return
	}
	searchDefaultQueue(t, c, f, rateBps)
}

// TestSearchAccuracyRFC2544Profile is issue 12's accuracy goal for the
// standard's own profile: `--profile rfc2544` (the RFC 2544 compatibility
// goal: zero loss in 60 s final trials, exceed ratio 0) through the lab's
// default shaping (1000-packet queue, 10 ms bucket) finds the tbf rate
// within −1 % … +0.5 %, not tester-limited. R is drawn in 10–500 Mbit/s
// and F from the seven RFC 2544 sizes at test time (RFC2544_SEED replays
// a draw). A search takes some 8 minutes of 60 s trials. R is at most
// rfc2544ProfileMaxFPS: a 60 s trial meets more of this host's stalls than
// the quick profile's 2 s ones, and a draw of 263 kfps at 128 B ended
// tester-limited in the truth campaign. Truth claim
// "ndr-rfc2544-profile".
func TestSearchAccuracyRFC2544Profile(t *testing.T) {
	c := truth.New(t, "ndr-rfc2544-profile")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x2545))
	f := rfc2544.DefaultFrameSizes[rng.IntN(len(rfc2544.DefaultFrameSizes))]
	maxBps := min(500e6, rfc2544ProfileMaxFPS*8*float64(f-4))
	rateBps := uint64(10e6+rng.Float64()*(maxBps-10e6)) / 1000 * 1000
	searchProfile(t, c, "tbf", rfc2544.ProfileRFC2544, -0.01, 0.005, f, rateBps, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}})
}

// rfc2544ProfileMaxFPS bounds the shaped rate TestSearchAccuracyRFC2544Profile
// draws, in frames/s: a quarter of the raw tester's ceiling here.
const rfc2544ProfileMaxFPS = 150e3

// relayMaxFPS bounds the relay's shaped rate drawn, in frames/s: a third of
// what the relay forwards on this 2-CPU box (55 kfps of 512 B at its NDR,
// issue 12), so its own limits stay out of a test of its shaper.
const relayMaxFPS = 20e3

// accuracyMaxFPS bounds the shaped rate drawn, in frames/s: half the
// raw tester's ceiling measured on this 2-CPU box (about 600 kfps at 64 B
// in the main job), so a stall or a busy CPU does not make the tester the
// limit of a test about the DUT.
const accuracyMaxFPS = 300e3

func searchDefaultQueue(t *testing.T, c *truth.Claim, f int, rateBps uint64) {
	cfg := lab.Config{AtoB: lab.Shaping{RateBps: rateBps}}
	if f > 1518 {
		cfg.MTUA, cfg.MTUB = 9000, 9000
	}
	searchShaped(t, c, "tbf", f, rateBps, cfg)
}

// searchShaped runs the quick profile's throughput search at f bytes
// through the lab of cfg (dut names it), whose A->B shaper (tbf, or the
// relay's) forwards rateBps counting frames without their FCS, and records
// the result in claim c against −2 % … +1 % of that rate in frames/s; a
// result not found or tester-limited fails the test.
func searchShaped(t *testing.T, c *truth.Claim, dut string, f int, rateBps uint64, cfg lab.Config) {
	searchProfile(t, c, dut, rfc2544.ProfileQuick, -0.02, 0.01, f, rateBps, cfg)
}

// searchProfile is searchShaped with the plan of profile, the result held
// to (1+lo) … (1+hi) × the shaper's rate.
func searchProfile(t *testing.T, c *truth.Claim, dut, profile string, lo, hi float64, f int, rateBps uint64, cfg lab.Config) {
	want := float64(rateBps) / (8 * float64(f-4))
	t.Logf("%d B through a DUT shaped to %d bit/s (lab defaults: 1000-packet queue, 10 ms bucket for tbf): R = %.0f fps", f, rateBps, want)
	st := labtest.New(t, cfg)
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4}
	}
	// As the CLI does: the sending thread off the DUT's CPUs.
	tc := trials.Config{A: pc(st.A), B: pc(st.B), TxCPU: st.TesterCPU()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	e, err := trials.Open(ctx, tc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the engine: %v", err)
		}
	})
	plan, err := rfc2544.DefaultPlan(profile)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []rfc2544.Test{rfc2544.TestThroughput}, []int{f}, 1e9, true
	r := &rfc2544.Runner{Tester: e, Plan: plan}
	res, err := r.Throughput(ctx, f)
	if err != nil {
		t.Fatalf("throughput %d B: %v", f, err)
	}
	for _, tr := range res.Trials {
		t.Logf("trial %d (%s, %.2g s): intended %.0f offered %.0f fps (%.2f%% of R), loss %.3f%%, %v %s%s%s", tr.Step, tr.Goal, tr.DurationS,
			tr.IntendedFPS, tr.OfferedFPS, 100*tr.OfferedFPS/want, tr.LossPercent, tr.Outcome, tr.TesterLimitReason, tr.FailReason,
			tr.Result.FlowControlReason)
	}
	t.Logf("%d B: throughput %.0f fps = %.2f%% of R (%.0f fps), found %v, tester-limited %v %s %s", f, res.FPS, 100*res.FPS/want, want,
		res.Found, res.TesterLimited, res.TesterLimitReason, res.Reason)
	if !res.Found || res.TesterLimited {
		t.Fatalf("%s profile, %d B at R = %d bit/s: found %v, tester-limited %v (%s): want the DUT's throughput", profile, f, rateBps, res.Found, res.TesterLimited, res.Reason)
	}
	c.Ratio("throughput / R", fmt.Sprintf("%s, %d B at %.1f Mbit/s", dut, f, float64(rateBps)/1e6), want, res.FPS, 1+lo, 1+hi)
}
