package rfc2544

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/testseed"
)

// A run with sizes 64, imix and 1518 through a simulated DUT of capacity
// R bit/s (L1, drawn at test time): the imix throughput is R in bits/s of
// the mix's mean frame, like the fixed sizes', and the results carry the
// mix under its code.
func TestRunIMIXSim(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 1))
	capPct := 20 + 70*rng.Float64()
	t.Logf("capacity %.2f %% of 1 Gbit/s", capPct)
	sim := &SimDUT{LinkBps: testLink, CapacityBps: capPct / 100 * testLink}
	p := testPlan([]Test{TestThroughput}, 64, framing.SizeIMIX, 1518)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 3 || res.Throughput[1].FrameSize != framing.SizeIMIX {
		t.Fatalf("throughput results %+v: want 64, imix, 1518 in order", res.Throughput)
	}
	R := capPct / 100 * testLink
	for _, tr := range res.Throughput {
		if !tr.Found {
			t.Fatalf("%s: not found: %s", framing.SizeName(tr.FrameSize), tr.Reason)
		}
		// The search's relative resolution is 0.5 %.
		if tr.L1Bps > R*(1+1e-9) || tr.L1Bps < R*0.99 {
			t.Errorf("%s: throughput %.4g bit/s (L1), want within -1 %%…0 of R %.4g\n%s",
				framing.SizeName(tr.FrameSize), tr.L1Bps, R, logTable(tr.Trials))
		}
	}
	im := res.Throughput[1]
	// L1 and L2 rates of the mix follow its mean frame: 353.83 + 20 bytes
	// on the wire per frame.
	if want := im.FPS * (framing.IMIX.MeanSize() + 20) * 8; math.Abs(im.L1Bps-want) > 1e-6*want {
		t.Errorf("imix L1 %.6g bit/s, want fps × (F̄+20) × 8 = %.6g", im.L1Bps, want)
	}
	if want := testLink / ((framing.IMIX.MeanSize() + 20) * 8); math.Abs(im.LineRateFPS-want) > 1e-6*want {
		t.Errorf("imix line rate %.1f fps, want %.1f", im.LineRateFPS, want)
	}
}

func TestPlanIMIX(t *testing.T) {
	p := testPlan(nil, 128, framing.SizeIMIX)
	p.IPv6 = true
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "imix") || !strings.Contains(err.Error(), "84") {
		t.Errorf("imix with IPv6: %v, want an error naming the mix and the 84-byte minimum", err)
	}
	base := testPlan(nil)
	got, _, err := ParsePlan("plan.yaml", []byte("frame_sizes: [64, imix, imix-csit, 1518]\n"), base)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{64, framing.SizeIMIX, framing.SizeIMIXCSIT, 1518}; !slices.Equal(got.FrameSizes, want) {
		t.Errorf("frame_sizes %v, want %v", got.FrameSizes, want)
	}
	y, err := got.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "- imix\n") {
		t.Errorf("plan YAML does not name the mix:\n%s", y)
	}
	back, _, err := ParsePlan("again.yaml", y, base)
	if err != nil || !slices.Equal(back.FrameSizes, got.FrameSizes) {
		t.Errorf("round trip: %v, %v", back.FrameSizes, err)
	}
	if _, _, err := ParsePlan("plan.yaml", []byte("frame_sizes: [64, imx]\n"), base); err == nil || !strings.Contains(err.Error(), "line 1: frame_sizes[1]") {
		t.Errorf("bad mix name: %v, want an error naming line 1 and frame_sizes[1]", err)
	}
}
