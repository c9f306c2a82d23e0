//go:build linux

package trials

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// BenchmarkRawReceive64 compares the raw receive loop as a plain goroutine
// at nice 0 napping on Go's timer (before) with the loop on a locked thread
// at the sending threads' priority napping with nanosleep (rawRxBoost,
// after), in one run on one lab: per iteration 1 s trials of 64-byte frames
// at 300, 400 and 500 kfps through the unshaped lab DUT (the sender off its
// CPU, as a run places it), each rate once per loop, the order alternating,
// a new engine per trial (the loop starts with the port). It reports the
// frames the receiving socket and link dropped per trial, the median of
// each loop, and the received share:
//
//	flock /tmp/rfc2544-lab.lock go test -run '^$' -bench RawReceive64 -benchtime 3x ./trials
func BenchmarkRawReceive64(b *testing.B) {
	st := labtest.New(b, lab.Config{})
	cfg := portsOf(st)
	cfg.TxCPU = st.TesterCPU()
	defer func() { rawRxBoost = true }()
	var drops, share [2][]float64 // [0] before, [1] after
	for i := 0; i < b.N; i++ {
		for _, rate := range []float64{300e3, 400e3, 500e3} {
			for k := range 2 {
				boost := (k+i)%2 == 1
				rawRxBoost = boost
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				e, err := Open(ctx, cfg)
				if err != nil {
					cancel()
					b.Fatal(err)
				}
				r, err := e.Run(ctx, oneWay(64, rate, time.Second))
				cancel()
				e.Close()
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
				b.Logf("iteration %d, %.0f fps, boosted loop %v: offered %.0f fps, sent %d received %d, receiver dropped %d, tester-limited %v %s",
					i, rate, boost, s.OfferedFPS, s.Sent, s.Received, s.KernelDrops, r.TesterLimited, r.TesterLimitReason)
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
