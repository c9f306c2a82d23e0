//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// BenchmarkXDPvsRaw compares the xdp transport with the raw one on one loop
// lab (port A cabled to port B, no DUT), in the same run, at 64, 512 and
// 1518 B. Per iteration and transport (the order alternating between
// iterations), on the same ports and the same sending CPU:
//
//   - generator: the full-speed rate a 1 s calibration offered (calibrate);
//   - receiver: what the receiver counted over that send window, with its
//     drops; a receiver that dropped nothing kept up, and its ceiling is
//     at least that rate ("≥");
//   - pacing error: |offered − asked| / asked of paced 0.5 s trials at 1 %,
//     50 % and 90 % of the lower of the two transports' ceilings at that
//     size measured in the same iteration, the worst of the three.
//
// It logs each iteration's figures and the medians with the ratios
// xdp/raw. One iteration is one repetition; Go runs the benchmark once with
// N = 1 on its own lab before the N asked, whose figures are the ones
// printed:
//
//	flock /tmp/rfc2544-lab.lock go test -run '^$' -bench XDPvsRaw -benchtime 3x -v ./trials
func BenchmarkXDPvsRaw(b *testing.B) {
	st := labtest.New(b, lab.Config{Topology: lab.TopologyLoop})
	sizes := []int{64, 512, 1518}
	fracs := []float64{0.01, 0.5, 0.9}
	names := [2]string{"raw", "xdp"}
	open := func(k int) (transport, func() error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if k == 0 {
			e, err := Open(ctx, xdpPortsOf(st))
			if err != nil {
				b.Fatalf("open raw: %v", err)
			}
			return e, e.Close
		}
		e, err := OpenXDP(ctx, xdpPortsOf(st))
		if errors.Is(err, afxdp.ErrNotSupported) {
			b.Skipf("AF_XDP cannot run here: %v", err)
		}
		if err != nil {
			b.Fatalf("open xdp: %v", err)
		}
		return e, e.Close
	}
	// figures[k][size][metric] over iterations; metrics: gen, rcv, drops, pacing
	type fig struct{ gen, rcv, drops, pace []float64 }
	var figs [2]map[int]*fig
	for k := range figs {
		figs[k] = map[int]*fig{}
		for _, s := range sizes {
			figs[k][s] = &fig{}
		}
	}
	var pts [2][]CalibrationPoint // the last iteration's calibrations
	for i := 0; i < b.N; i++ {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			e, closeE := open(k)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			p, err := calibrate(ctx, e, sizes, time.Second)
			cancel()
			closeE()
			if err != nil {
				b.Fatalf("calibrate %s: %v", names[k], err)
			}
			pts[k] = p
		}
		for _, k := range order {
			e, closeE := open(k)
			for j, s := range sizes {
				ceil := math.Min(pts[0][j].CeilingFPS, pts[1][j].CeilingFPS)
				worst := 0.0
				var line []string
				for _, f := range fracs {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					r, err := runTransport(ctx, e, oneWay(s, f*ceil, 500*time.Millisecond), false)
					cancel()
					if err != nil {
						b.Fatalf("%s %d B at %.0f fps: %v", names[k], s, f*ceil, err)
					}
					sr := r.Streams[0]
					pe := math.Abs(sr.OfferedFPS-sr.IntendedFPS) / sr.IntendedFPS
					worst = max(worst, pe)
					line = append(line, fmt.Sprintf("%.0f%% %.0f→%.0f fps (%.3f %%, lost %d, limited %v)", 100*f, sr.IntendedFPS, sr.OfferedFPS, 100*pe, sr.Lost, r.TesterLimited))
				}
				fg := figs[k][s]
				p := pts[k][j]
				fg.gen = append(fg.gen, p.OfferedFPS)
				fg.rcv = append(fg.rcv, p.ReceivedFPS)
				fg.drops = append(fg.drops, float64(p.KernelDrops))
				fg.pace = append(fg.pace, worst)
				b.Logf("iteration %d %s %4d B: generator %.0f fps, receiver %.0f fps (drops %d); pacing %s", i, names[k], s,
					p.OfferedFPS, p.ReceivedFPS, p.KernelDrops, strings.Join(line, ", "))
			}
			closeE()
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	rcv := func(f *fig) string {
		m := med(f.rcv)
		if med(f.drops) == 0 {
			return fmt.Sprintf("≥%.0f", m) // the receiver kept up: its ceiling is above
		}
		return fmt.Sprintf("%.0f", m)
	}
	b.Logf("medians of %d iterations, %s; raw tx %s rx %s, xdp %s", b.N, time.Now().UTC().Format(time.RFC3339),
		pts[0][0].Paths.TX, pts[0][0].Paths.RX, pts[1][0].Paths.XDP)
	b.Logf("%5s %11s %11s %7s %12s %12s %11s %11s", "frame", "gen raw", "gen xdp", "xdp/raw", "rcv raw", "rcv xdp", "pace% raw", "pace% xdp")
	for _, s := range sizes {
		r, x := figs[0][s], figs[1][s]
		b.Logf("%5d %11.0f %11.0f %7.3f %12s %12s %11.3f %11.3f", s, med(r.gen), med(x.gen), med(x.gen)/med(r.gen),
			rcv(r), rcv(x), 100*med(r.pace), 100*med(x.pace))
		b.ReportMetric(med(x.gen)/med(r.gen), fmt.Sprintf("gen-xdp/raw-%dB", s))
		b.ReportMetric(100*med(x.pace), fmt.Sprintf("pace%%-xdp-%dB", s))
		b.ReportMetric(100*med(r.pace), fmt.Sprintf("pace%%-raw-%dB", s))
	}
}
