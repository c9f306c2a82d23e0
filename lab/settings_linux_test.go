package lab_test

import (
	"math"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"gonum.org/v1/gonum/stat"
)

// TestShapedRate sends a burst far above the shaped rate (but within the
// queue limit, so nothing is dropped) and checks that it arrives at the
// configured rate, counted as tc does (IP packet + 14-byte Ethernet
// header). Truth claim "lab-shaped-rate". A burst that did not outrun the
// shaper, or whose receiver stalled, measures nothing of the shaper: it is
// sent again, at most twice (the measurement's precondition, logged), and
// a third such burst fails the claim.
func TestShapedRate(t *testing.T) {
	c := truth.New(t, "lab-shaped-rate")
	tests := []struct {
		name    string
		cfg     lab.Config
		reverse bool // send B→A
		rate    float64
		payload int
		n       int // frames in the burst
	}{
		{name: "20mbit A→B", cfg: lab.Config{AtoB: lab.Shaping{RateBps: 20e6}}, rate: 20e6, payload: 1000, n: 900},
		// At 200 Mbit/s a 1 ms bucket (25 KB, 17 frames): the default
		// 10 ms one (173 frames), and as many skipped after it, left
		// 1-207 of the 900 frames queued when a sender this host
		// slowed to 320-680 Mbit/s finished (another process keeping a
		// CPU busy: CI under stress-ng --cpu 1 on 2026-12-02); a longer
		// burst overflows the DUT's 1000-frame ingress backlog.
		{name: "200mbit A→B", cfg: lab.Config{AtoB: lab.Shaping{RateBps: 200e6, BurstBytes: 25000}}, rate: 200e6, payload: 1400, n: 900},
		{name: "asymmetric B→A 50mbit", cfg: lab.Config{AtoB: lab.Shaping{RateBps: 10e6}, BtoA: lab.Shaping{RateBps: 50e6}}, reverse: true, rate: 50e6, payload: 1400, n: 900},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := labtest.New(t, tt.cfg)
			from, to := st.A, st.B
			if tt.reverse {
				from, to = st.B, st.A
			}
			warm(t, st, false)
			n := tt.n // below the default queue limit of 1000
			frame := tt.payload + 28 + 14
			var got []arrival
			var offered float64
			var skip int
			// The burst must outrun the shaper (a quarter of it still
			// queued when the sender finished) for the queue to drain at
			// the shaped rate. A sender this shared host slowed (CI on
			// 2026-12-02: 285 Mbit/s offered into 200, 95 frames queued
			// at its end), or a receiver it stalled (below), sends again,
			// at most twice.
			for attempt := 1; ; attempt++ {
				rx := newSink(t, to.Namespace, to.IPv4.Addr())
				tx := newSource(t, from.Namespace, from.IPv4.Addr())
				// Off the DUT's CPU: sharing it, the sender slowed to the
				// DUT's pace (148-255 Mbit/s, against 640-2500 off it),
				// too close to 200 for the default bucket (10 ms,
				// 250 KB) to leave a queue (CI under stress-ng --cpu 1
				// on 2026-12-02: 234 Mbit/s offered into 200, 1 frame
				// queued at its end).
				tx.avoid = st.DUTCPUs
				sent, took := tx.send(t, rx.addr(), n, tt.payload, 0)
				sendEnd := time.Now()
				got = rx.stop(100 * time.Millisecond)
				offered = float64(sent*frame*8) / took.Seconds()
				if len(got) != sent {
					t.Fatalf("received %d of %d: the burst was dropped", len(got), sent)
				}
				// Measure once the sender is done and a bucket's worth
				// more has left: from then on the queue drains at exactly
				// the shaped rate. The bucket is full at the start, and
				// it may have refilled while the DUT's forwarding was held
				// up behind the sender, its frames still in the ingress
				// backlog when the sender finished and then sent on at
				// once (178.05 Mbit/s read for 150 when only the start's
				// bucket was skipped).
				bucket := int(tt.cfg.AtoB.BurstBytes)
				if tt.reverse {
					bucket = int(tt.cfg.BtoA.BurstBytes)
				}
				if bucket == 0 {
					bucket = int(tt.rate / 8 / 100) // the lab's default
				}
				skip = 0
				for skip < len(got)-2 && got[skip].at.Before(sendEnd) {
					skip++
				}
				skip = min(skip+bucket/frame+2, len(got)-2)
				// The queue drains at the shaped rate only if this host
				// let the DUT send and the receiver stamp its frames as
				// they came: a gap over 2 ms (35 frame times at 200
				// Mbit/s) is a stall whose frames were then stamped in a
				// bunch (CI on 2026-12-02 read 315.76 Mbit/s for 200 that
				// way), or after which the bucket, refilled, let a bunch
				// go at once. Such a bunch up to a bucket's worth before
				// the first frame measured makes it late and the rate
				// high (51.74 Mbit/s read for 50), so gaps are checked
				// from there. A gap longer than the bucket takes (1 ms
				// for the 200 Mbit/s case) wastes tokens: a 1.28 ms one
				// read 197.82 Mbit/s for 200. So a gap must be under half
				// the bucket, too.
				maxGap := min(2*time.Millisecond, time.Duration(float64(bucket*8)/tt.rate*1e9)/2)
				var gap time.Duration
				for i := max(1, skip-bucket/frame-2); i < len(got); i++ {
					gap = max(gap, got[i].at.Sub(got[i-1].at))
				}
				queued := len(got)-1-skip >= n/4
				if queued && gap <= maxGap {
					break
				}
				if attempt == 3 {
					t.Fatalf("%d frames arrived after the sender finished (offered %.0f Mbit/s; want %d), largest gap %v (want %v at most), in 3 bursts: the queue never built up or the receiver stalled",
						len(got)-1-skip, offered/1e6, n/4, gap, maxGap)
				}
				t.Logf("burst %d: %d frames arrived after the sender finished (offered %.0f Mbit/s), largest gap %v: sending again", attempt, len(got)-1-skip, offered/1e6, gap)
			}
			// The drain's rate is the slope of arrival time over frame
			// count, fitted over every frame measured: the first and the
			// last alone (a timer a few tens of µs late at either end)
			// read 199.55-201.18 Mbit/s for 200 over 25 runs.
			xs, ys := make([]float64, 0, len(got)-skip), make([]float64, 0, len(got)-skip)
			for i := skip; i < len(got); i++ {
				xs = append(xs, float64(i-skip))
				ys = append(ys, got[i].at.Sub(got[skip].at).Seconds())
			}
			_, perFrame := stat.LinearRegression(xs, ys, nil, false)
			measured := float64(frame*8) / perFrame
			t.Logf("offered %.1f Mbit/s, arrived at %.2f Mbit/s (configured %.0f Mbit/s)", offered/1e6, measured/1e6, tt.rate/1e6)
			// Measured over 30 runs under stress-ng --cpu 1 (2026-12-02): 20.00,
			// 199.95-200.09, 49.99-50.01 Mbit/s.
			c.Ratio("drain rate / the shaper's", tt.name, tt.rate, measured, 0.99, 1.01)
		})
	}
}

// TestRandomLoss checks the configured loss within ±0.5 points, and that
// the DUT's loss counter accounts for every missing frame. The frame counts
// keep ±0.5 points beyond 4.5 binomial standard deviations.
func TestRandomLoss(t *testing.T) {
	tests := []struct {
		name   string
		pct    float64
		frames int
	}{
		{name: "2%", pct: 2, frames: 20000}, // σ = 0.10 points
		{name: "5%", pct: 5, frames: 40000}, // σ = 0.11 points
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := labtest.New(t, lab.Config{AtoB: lab.Shaping{LossPercent: tt.pct}})
			warm(t, st, false)
			before, err := st.DUTCounters()
			if err != nil {
				t.Fatal(err)
			}
			rx := newSink(t, st.B.Namespace, st.B.IPv4.Addr())
			tx := newSource(t, st.A.Namespace, st.A.IPv4.Addr())
			sent, _ := tx.send(t, rx.addr(), tt.frames, 64, 50000)
			got := rx.stop(100 * time.Millisecond)
			after, err := st.DUTCounters()
			if err != nil {
				t.Fatal(err)
			}
			lossPct := 100 * float64(sent-len(got)) / float64(sent)
			drops := after.LossDropsAB - before.LossDropsAB
			t.Logf("sent %d, received %d: loss %.2f%% (configured %g%%), DUT loss-rule drops %d", sent, len(got), lossPct, tt.pct, drops)
			if math.Abs(lossPct-tt.pct) > 0.5 {
				t.Errorf("loss %.2f%%, want %g ±0.5 points", lossPct, tt.pct)
			}
			if drops != uint64(sent-len(got)) {
				t.Errorf("DUT counted %d loss drops, %d frames missing", drops, sent-len(got))
			}
		})
	}
}
