package rfc2544

import (
	"math"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// simTimeline is what the SimDUT's fluid model says about one stream over
// its trial, for its interval records: the offered segments, the queue's
// pieces (nil when the DUT takes nothing), the forwarding rate c and the
// base latency (s), and the frames sent and received in all.
type simTimeline struct {
	segs           []segment
	pieces         []piece
	c, base        float64
	sent, received uint64
}

// offered is the frames of the stream sent by t (s from the start of
// traffic), in whole frames.
func (tl *simTimeline) offered(t float64) uint64 {
	var n, t0 float64
	for _, g := range tl.segs {
		n += g.rate * max(0, min(t, t0+g.dur)-t0)
		t0 += g.dur
	}
	return min(uint64(math.Floor(n+1e-6)), tl.sent)
}

// accepted is the fraction of the frames the DUT accepted that were sent by t.
func (tl *simTimeline) accepted(t float64) float64 {
	var a, all float64
	for _, p := range tl.pieces {
		all += p.acc * (p.t1 - p.t0)
		a += p.acc * max(0, min(t, p.t1)-p.t0)
	}
	if all <= 0 {
		return 0
	}
	return a / all
}

// latency is the model's latency (s) of the frames sent in [t0, t1): the
// base plus the queue's delay, its min, max and mean weighted by the frames
// accepted; ok is false when none were.
func (tl *simTimeline) latency(t0, t1 float64) (lo, mean, hi float64, ok bool) {
	var w, sum float64
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range tl.pieces {
		a, b := max(t0, p.t0), min(t1, p.t1)
		if b <= a || p.acc <= 0 {
			continue
		}
		qa, qb := p.q(a), p.q(b)
		lo, hi = min(lo, qa, qb), max(hi, qa, qb)
		n := p.acc * (b - a)
		w += n
		sum += n * (qa + qb) / 2
	}
	if w <= 0 {
		return 0, 0, 0, false
	}
	d := func(q float64) float64 {
		if math.IsInf(tl.c, 1) || tl.c <= 0 {
			return tl.base
		}
		return tl.base + q/tl.c
	}
	return d(lo), d(sum / w), d(hi), true
}

// simIntervals reports a simulated trial's intervals, as the engines do
// (trials.Interval): one per second of traffic, the last through the settle
// wait, their frames adding up to the streams' Sent and Received. Frames
// count in the interval they were sent in (the model has no arrival times
// apart from the latency). It draws no random numbers, so it changes no
// figure of the trial.
func simIntervals(spec trials.Spec, tls []simTimeline, traffic float64, on func(trials.Interval)) {
	n := trials.Intervals(spec)
	var prevSent, prevRx uint64
	for k := range n {
		final := k == n-1
		t0, t1 := float64(k)*trials.IntervalPeriod.Seconds(), float64(k+1)*trials.IntervalPeriod.Seconds()
		end := time.Duration(t1 * 1e9)
		if final {
			t1 = traffic
			end = time.Duration(traffic*1e9) + spec.Settle
		}
		iv := trials.Interval{Index: k, StartNs: int64(time.Duration(t0 * 1e9)), EndNs: int64(end), Final: final}
		var sent, rx uint64
		lo, hi, wsum, w := math.Inf(1), 0.0, 0.0, 0.0
		for i := range tls {
			tl := &tls[i]
			if final {
				sent += tl.sent
				rx += tl.received
			} else {
				sent += tl.offered(t1)
				rx += uint64(math.Floor(tl.accepted(t1)*float64(tl.received) + 1e-6))
			}
			if l, m, h, ok := tl.latency(t0, t1); ok {
				lo, hi = min(lo, l), max(hi, h)
				wsum += m
				w++
			}
		}
		rx = max(rx, prevRx)
		iv.SentSoFar, iv.ReceivedSoFar = sent, rx
		iv.Offered, iv.Received = sent-prevSent, rx-prevRx
		if sent > rx {
			iv.LossSoFarPercent = 100 * float64(sent-rx) / float64(sent)
		}
		if w > 0 && iv.Received > 0 {
			iv.LatencyMinNs, iv.LatencyMaxNs = int64(lo*1e9), int64(hi*1e9)
			iv.LatencyAvgNs = wsum / w * 1e9
		}
		prevSent, prevRx = sent, rx
		on(iv)
	}
}
