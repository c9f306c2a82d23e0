//go:build linux

package trials_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// TestIntervalsSumToTotals: a 3 s trial through a DUT shaped below the
// offered load (so frames are lost) yields, on both transports, 3 interval
// records: the first two about a second each, the last Final and through the
// settle wait; their offered and received frames add up to the trial's Sent
// and Received, and each interval's latency lies within the trial's.
func TestIntervalsSumToTotals(t *testing.T) {
	const size, fps = 512, 18000 // 73 Mbit/s of bytes the shaper counts, through 50 Mbit/s
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: 50e6, BurstBytes: 3100, LimitPackets: 50}})
	udp, raw := labTesters(t, st)
	for _, tc := range []struct {
		name string
		run  func(context.Context, trials.Spec) (trials.Result, error)
	}{{"raw", raw.Run}, {"udp", udp.Run}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var ivs []trials.Interval
			spec := trials.Spec{FrameSize: size, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, RateFPS: fps,
				Duration: 3 * time.Second, Settle: 300 * time.Millisecond,
				OnInterval: func(iv trials.Interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() }}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := tc.run(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			logResult(t, tc.name, res)
			mu.Lock()
			defer mu.Unlock()
			for _, iv := range ivs {
				t.Logf("%+v", iv)
			}
			if res.Spec.OnInterval != nil {
				t.Error("Result.Spec keeps OnInterval")
			}
			if len(ivs) != 3 {
				t.Fatalf("%d intervals, want 3", len(ivs))
			}
			s := res.Streams[0]
			var off, rx uint64
			for i, iv := range ivs {
				off += iv.Offered
				rx += iv.Received
				if iv.Index != i || iv.Final != (i == 2) {
					t.Errorf("interval %d: index %d final %v", i, iv.Index, iv.Final)
				}
				if i > 0 && iv.StartNs != ivs[i-1].EndNs {
					t.Errorf("interval %d starts at %d ns, the previous ended at %d", i, iv.StartNs, ivs[i-1].EndNs)
				}
				if iv.Received > 0 && (iv.LatencyMinNs < s.Latency.MinNs || iv.LatencyMaxNs > s.Latency.MaxNs ||
					iv.LatencyAvgNs < float64(iv.LatencyMinNs) || iv.LatencyAvgNs > float64(iv.LatencyMaxNs)) {
					t.Errorf("interval %d latency min/avg/max %d/%.0f/%d ns, outside the trial's %d…%d", i,
						iv.LatencyMinNs, iv.LatencyAvgNs, iv.LatencyMaxNs, s.Latency.MinNs, s.Latency.MaxNs)
				}
			}
			if off != s.Sent || rx != s.Received || ivs[2].SentSoFar != s.Sent || ivs[2].ReceivedSoFar != s.Received {
				t.Errorf("intervals add up to offered %d received %d (so far %d, %d); the trial sent %d received %d",
					off, rx, ivs[2].SentSoFar, ivs[2].ReceivedSoFar, s.Sent, s.Received)
			}
			if s.Lost == 0 {
				t.Errorf("nothing lost at %d fps through 50 Mbit/s: the test needs loss", fps)
			}
			// The periodic ones end about a second apart: the sampler's
			// timer, late by the box's load at most.
			for i := range 2 {
				if d := time.Duration(ivs[i].EndNs - ivs[i].StartNs); d < 950*time.Millisecond || d > 1200*time.Millisecond {
					t.Errorf("interval %d lasts %v, want about 1 s", i, d)
				}
			}
			if !res.TesterLimited {
				for i := range 2 {
					if ivs[i].Offered < fps*9/10 || ivs[i].Offered > fps*11/10 {
						t.Errorf("interval %d offered %d frames, want about %d (the paced rate for 1 s)", i, ivs[i].Offered, fps)
					}
				}
			}
		})
	}
}
