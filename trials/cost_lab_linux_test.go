//go:build linux

package trials_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// BenchmarkSearchCostLab is issue 12's cost measure on the lab: the
// trial-seconds (and wall time) one mlr search spends on an NDR and a PDR
// (0.5 %) of 0.5 % relative width, against two binary searches (one per
// loss goal) with the same final trial duration (2 s) and relative
// resolution, through a DUT shaped to a rate drawn per iteration (20–200
// Mbit/s, 512 or 1518 B, the lab's default queue and bucket). It reports
// the ratios as metrics:
//
//	go test -run '^$' -bench SearchCostLab -benchtime 5x ./trials
func BenchmarkSearchCostLab(b *testing.B) {
	seed := uint64(time.Now().UnixNano())
	b.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xc057))
	var traffic, wall []float64
	for i := 0; i < b.N; i++ {
		f := []int{512, 1518}[rng.IntN(2)]
		rateBps := uint64(20e6+rng.Float64()*180e6) / 1000 * 1000
		st := costLab(b, i, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}})
		udp, raw := labTesters(b, st)
		base, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
		if err != nil {
			b.Fatal(err)
		}
		base.Tests, base.FrameSizes, base.LinkBps, base.NoProbe = []rfc2544.Test{rfc2544.TestThroughput}, []int{f}, 1e9, true
		base.Trial.Duration = rfc2544.QuickMinFinalDuration
		run := func(p rfc2544.Plan) (secs, wallS float64, res rfc2544.ThroughputResult) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			t0 := time.Now()
			res, err := (&rfc2544.Runner{Tester: raw, Plan: p}).Throughput(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			for _, tr := range res.Trials {
				secs += tr.Result.Spec.Duration.Seconds()
			}
			return secs, time.Since(t0).Seconds(), res
		}
		m := base
		m.Throughput.Goals = []rfc2544.Goal{{Name: "NDR", ExceedRatio: 0.5}, {Name: "PDR", LossPercent: 0.5, ExceedRatio: 0.5}}
		ms, mw, mres := run(m)
		var bs, bw float64
		var found []float64
		for _, loss := range []float64{0, 0.5} {
			p := base
			p.Throughput.Search = rfc2544.SearchBinary
			p.Throughput.LossTolerancePercent = loss
			p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent = 0, 0.5
			s, w, r := run(p)
			bs, bw = bs+s, bw+w
			found = append(found, r.FPS)
		}
		r := float64(rateBps) / (8 * float64(f-4))
		b.Logf("%d B, R = %.0f fps: mlr %.0f trial-s, %.0f s wall (NDR %.4f × R, PDR %.4f × R); binary ×2 %.0f trial-s, %.0f s wall (%.4f, %.4f × R); ratio %.2f trial-s, %.2f wall",
			f, r, ms, mw, mres.Goals[0].LowerFPS/r, mres.Goals[1].LowerFPS/r, bs, bw, found[0]/r, found[1]/r, ms/bs, mw/bw)
		traffic, wall = append(traffic, ms/bs), append(wall, mw/bw)
		raw.Close()
		udp.Close()
		if err := lab.Down(st.Name); err != nil {
			b.Fatalf("lab down %s: %v", st.Name, err)
		}
	}
	b.ReportMetric(medianOf(traffic), "mlr/binary-trial-s")
	b.ReportMetric(medianOf(wall), "mlr/binary-wall")
}

// costLab is labtest.New for the i-th draw of a benchmark: its own name,
// removed before the next draw.
func costLab(b *testing.B, i int, cfg lab.Config) *lab.State {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("building a lab needs root (network namespaces)")
	}
	cfg.Name = fmt.Sprintf("%s%d", labtest.Name(b), i%10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := lab.Up(ctx, cfg)
	if err != nil {
		b.Fatalf("lab up %s: %v", cfg.Name, err)
	}
	b.Cleanup(func() { // after a failure; each draw removes its lab itself
		if err := lab.Down(cfg.Name); err != nil && !errors.Is(err, lab.ErrNotFound) {
			b.Errorf("lab down %s: %v", cfg.Name, err)
		}
	})
	return st
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else if n > 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return 0
}
