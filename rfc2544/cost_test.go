package rfc2544

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/testseed"
)

// TestMLRCost measures what an NDR and a PDR (0.5 % loss) of 0.5 % relative
// width cost: one mlr search with both goals against binary searches run
// twice, once per loss goal, with the same final trial duration (60 s) and
// the same relative resolution. Cost is trial-seconds (traffic time) and
// tester time (learning, traffic, settle and rest of every trial), over
// simulated DUTs drawn from a logged seed. The median ratio must be at
// most 0.5 (issue 12).
//
//	go test ./rfc2544 -run TestMLRCost -v
func TestMLRCost(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 9971))
	const final = 60 * time.Second
	var traffic, tester []float64
	for i := range 24 {
		c := 5 + rng.Float64()*90
		size := DefaultFrameSizes[rng.IntN(len(DefaultFrameSizes))]
		dut := func() *SimDUT {
			return &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 256, Noise: 0.001, Seed: uint64(i)}
		}
		base, err := DefaultPlan(ProfileRFC2544)
		if err != nil {
			t.Fatal(err)
		}
		base.LinkBps, base.FrameSizes, base.Tests, base.NoProbe = testLink, []int{size}, []Test{TestThroughput}, true
		base.Trial.Duration = Duration(final)

		m := base
		m.Throughput.Search = SearchMLR
		m.Throughput.Goals = []Goal{{Name: "NDR"}, {Name: "PDR", LossPercent: 0.5}}
		mres, err := (&Runner{Tester: dut(), Plan: m, Sleep: noSleep}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var bt, bw float64
		var bres []*Results
		for _, loss := range []float64{0, 0.5} {
			b := base
			b.Throughput.Search = SearchBinary
			b.Throughput.LossTolerancePercent = loss
			b.Throughput.ResolutionRelativePercent = 0.5
			r, err := (&Runner{Tester: dut(), Plan: b, Sleep: noSleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			bt += trafficSeconds(r)
			bw += r.TrialTime().Seconds()
			bres = append(bres, r)
		}
		mt, mw := trafficSeconds(mres), mres.TrialTime().Seconds()
		traffic = append(traffic, mt/bt)
		tester = append(tester, mw/bw)
		g := mres.Throughput[0].Goals
		t.Logf("C=%5.2f%% %4d B: mlr %3d trials %6.0f s (NDR %.3f%% PDR %.3f%%) | binary ×2 %3d trials %6.0f s (NDR %.3f%% PDR %.3f%%) | ratio %.2f",
			c, size, len(mres.Throughput[0].Trials), mt, g[0].LowerPercent, g[1].LowerPercent,
			len(bres[0].Throughput[0].Trials)+len(bres[1].Throughput[0].Trials), bt,
			bres[0].Throughput[0].IntendedPercent, bres[1].Throughput[0].IntendedPercent, mt/bt)
		// Both land on the truth within their widths: a goal of loss L
		// crosses at C/(1−L), C drawn per trial from [C(1−noise), C]; one
		// frame per trial of slack for whole frames, and the buffer's
		// 256 frames a 60 s trial absorbs without loss.
		frame := 257 * 100 / framing.LineRateFPS(testLink, size) / final.Seconds()
		for k, gr := range g {
			hi := c / (1 - gr.Goal.LossPercent/100)
			lo := hi * (1 - 0.001) * (1 - 0.005)
			for _, got := range []struct {
				who string
				v   float64
			}{{"mlr", gr.LowerPercent}, {"binary", bres[k].Throughput[0].IntendedPercent}} {
				if got.v < lo-frame || got.v > hi+frame {
					t.Errorf("C=%.2f%%: %s %s %.4f%%, want %.4f…%.4f", c, got.who, gr.Goal.Name, got.v, lo, hi)
				}
			}
		}
	}
	mt, mw := median(traffic), median(tester)
	t.Logf("median cost ratio mlr / (binary NDR + binary PDR): trial-seconds %.2f, tester time %.2f (min %.2f, max %.2f)",
		mt, mw, slices.Min(traffic), slices.Max(traffic))
	if mt > 0.5 {
		t.Errorf("median trial-seconds ratio %.2f, want at most 0.5", mt)
	}
}

func trafficSeconds(r *Results) float64 {
	var s float64
	for _, x := range r.Throughput {
		for _, tr := range x.Trials {
			s += tr.Result.Spec.Duration.Seconds()
		}
	}
	return s
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
