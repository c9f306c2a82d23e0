//go:build linux

package trials

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// BenchmarkXDPReceive64 compares the xdp receive loop at nice 0 with Go's
// timer nap (before) and at the sending threads' priority with a
// nanosleep nap (xdpRxBoost, after), in one run on one lab: per iteration
// 1 s trials of 64-byte frames at 650, 750 and 850 kfps through the unshaped
// lab DUT, each rate once per loop, the order alternating. It reports the
// frames the receiving AF_XDP socket dropped (RX ring full or no free fill
// chunk) per trial, the median of each loop, and the received share:
//
//	flock /tmp/rfc2544-lab.lock go test -run '^$' -bench XDPReceive64 -benchtime 3x ./trials
func BenchmarkXDPReceive64(b *testing.B) {
	st := labtest.New(b, lab.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	e, err := OpenXDP(ctx, xdpPortsOf(st))
	cancel()
	if errors.Is(err, afxdp.ErrNotSupported) {
		b.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	defer func() { xdpRxBoost = true }()
	var drops, share [2][]float64 // [0] before, [1] after
	for i := 0; i < b.N; i++ {
		for _, rate := range []float64{650e3, 750e3, 850e3} {
			for k := range 2 {
				boost := (k+i)%2 == 1
				xdpRxBoost = boost
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				r, err := e.Run(ctx, oneWay(64, rate, time.Second))
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				s := r.Streams[0]
				j := 0
				if boost {
					j = 1
				}
				drops[j] = append(drops[j], float64(s.KernelDrops))
				share[j] = append(share[j], float64(s.Received)/float64(max(s.Sent, 1)))
				b.Logf("iteration %d, %.0f fps, boosted loop %v: offered %.0f fps, sent %d received %d, receiver dropped %d, tester-limited %v",
					i, rate, boost, s.OfferedFPS, s.Sent, s.Received, s.KernelDrops, r.TesterLimited)
			}
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med(drops[0]), "rxdrops/trial-before")
	b.ReportMetric(med(drops[1]), "rxdrops/trial-after")
	b.ReportMetric(med(share[0]), "received/sent-before")
	b.ReportMetric(med(share[1]), "received/sent-after")
}
