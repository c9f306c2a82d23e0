package trials

import (
	"math"
	"sync"
	"time"
)

// IntervalPeriod is how often a running trial reports an Interval: every
// second of traffic, as iperf3 does.
const IntervalPeriod = time.Second

// Interval is what one period of a running trial carried, summed over its
// streams: a progress record, so that a long trial is observable while it
// runs. A timed trial of duration D yields ⌈D/IntervalPeriod⌉ intervals; the
// last (Final) runs from the last period's start to the end of the settle
// wait, so the intervals' Offered and Received add up to the trial's Sent
// and Received (a burst yields one, Final). Intervals change no measured
// figure: the Result is the measurement.
type Interval struct {
	// Index counts the trial's intervals from 0.
	Index int `json:"index"`
	// StartNs and EndNs bound the interval, in ns from the start of traffic.
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
	// Final marks the trial's last interval (through the settle wait).
	Final bool `json:"final,omitempty"`
	// Offered is the frames the generator sent in the interval (the kernel
	// took them); Received the test frames that arrived in it, on time.
	Offered  uint64 `json:"offered"`
	Received uint64 `json:"received"`
	// SentSoFar and ReceivedSoFar are the totals since the trial began;
	// LossSoFarPercent is 100·(SentSoFar − ReceivedSoFar)/SentSoFar, so a
	// frame still in flight at the interval's end counts until it arrives.
	SentSoFar        uint64  `json:"sent_so_far"`
	ReceivedSoFar    uint64  `json:"received_so_far"`
	LossSoFarPercent float64 `json:"loss_so_far_percent"`
	// LatencyMinNs, LatencyAvgNs and LatencyMaxNs are over the frames
	// received in the interval (0 when none arrived).
	LatencyMinNs int64   `json:"latency_min_ns"`
	LatencyAvgNs float64 `json:"latency_avg_ns"`
	LatencyMaxNs int64   `json:"latency_max_ns"`
	// Partial marks an interval of a two-host trial before its end: it
	// holds this host's halves only, Offered what this host sent and
	// Received (and latency) what it received of the streams it receives;
	// the far host's counts come with the trial's end, so LossSoFarPercent
	// is left 0. The final interval is whole: it adds what the far host
	// counted, so the intervals still sum to the trial's Sent and Received.
	Partial bool `json:"partial,omitempty"`
}

// Intervals returns how many Interval records a trial of spec yields.
func Intervals(spec Spec) int {
	if spec.BurstFrames > 0 || spec.Duration <= 0 {
		return 1
	}
	return int((spec.Duration + IntervalPeriod - 1) / IntervalPeriod)
}

// liveCounts is what receivers counted over a stretch of a trial: frames
// received on time and their latencies' count, sum, min and max (ns; min is
// MaxInt64 when none).
type liveCounts struct {
	received       uint64
	latN           uint64
	latSum         int64
	latMin, latMax int64
}

func (c *liveCounts) reset() { *c = liveCounts{latMin: math.MaxInt64} }

// frame adds one received frame of latency d (ns, clamped at 0).
func (c *liveCounts) frame(d int64) {
	d = max(d, 0)
	c.received++
	c.latN++
	c.latSum += d
	c.latMin = min(c.latMin, d)
	c.latMax = max(c.latMax, d)
}

func (c *liveCounts) add(o liveCounts) {
	c.received += o.received
	c.latN += o.latN
	c.latSum += o.latSum
	c.latMin = min(c.latMin, o.latMin)
	c.latMax = max(c.latMax, o.latMax)
}

// liveMeter hands a receiver's counts to the interval sampler: the receiving
// loop counts frames into pend (its own, no lock, nothing per frame but
// adds and compares) and publishes them once per batch; the sampler takes
// what was published. Frames counted and published before a take are in
// that take's interval.
type liveMeter struct {
	pend liveCounts // the receiving loop's, since its last publish
	mu   sync.Mutex
	pub  liveCounts // published since the last take
}

func newLiveMeter() *liveMeter {
	m := &liveMeter{}
	m.pend.reset()
	m.pub.reset()
	return m
}

// publish makes the pending counts visible to take. The receiving loop
// calls it after each batch (a nil meter does nothing). It does not
// allocate.
func (m *liveMeter) publish() {
	if m == nil || m.pend.received == 0 {
		return
	}
	m.mu.Lock()
	m.pub.add(m.pend)
	m.mu.Unlock()
	m.pend.reset()
}

// take returns the counts published since the last take and starts again.
func (m *liveMeter) take() liveCounts {
	m.mu.Lock()
	c := m.pub
	m.pub.reset()
	m.mu.Unlock()
	return c
}

// intervalBuilder turns the sampler's readings into Interval records: each
// call gives the cumulative frames sent and what the receivers counted since
// the previous call.
type intervalBuilder struct {
	index            int
	lastEnd          time.Duration
	sent, received   uint64
	prevSent, prevRx uint64
}

// next is the interval ending at end (from the start of traffic), with
// sentSoFar the frames sent since the trial began and c the receivers'
// counts since the previous interval.
func (b *intervalBuilder) next(end time.Duration, sentSoFar uint64, c liveCounts, final bool) Interval {
	b.sent = max(sentSoFar, b.sent)
	b.received += c.received
	iv := Interval{
		Index:         b.index,
		StartNs:       int64(b.lastEnd),
		EndNs:         int64(end),
		Final:         final,
		Offered:       b.sent - b.prevSent,
		Received:      c.received,
		SentSoFar:     b.sent,
		ReceivedSoFar: b.received,
	}
	if b.sent > 0 && b.received < b.sent {
		iv.LossSoFarPercent = 100 * float64(b.sent-b.received) / float64(b.sent)
	}
	if c.latN > 0 {
		iv.LatencyMinNs, iv.LatencyMaxNs = c.latMin, c.latMax
		iv.LatencyAvgNs = float64(c.latSum) / float64(c.latN)
	}
	b.index++
	b.lastEnd = end
	b.prevSent, b.prevRx = b.sent, b.received
	return iv
}

// sampler reports a running trial's intervals to Spec.OnInterval: one per
// IntervalPeriod of traffic from its own goroutine, then the final one from
// the trial's goroutine when traffic and the settle wait are over.
type sampler struct {
	spec  Spec
	start time.Time
	b     intervalBuilder
	stop  chan struct{}
	done  chan struct{}
	// partial marks the periodic intervals Partial (RemoteEngine: this
	// host sees only its part of the trial).
	partial bool
}

// startSampler starts sampling the trial's streams (their published sent
// counts) and receivers, or returns nil when spec has no OnInterval.
func startSampler(spec Spec, start time.Time, states []*streamState, rx [2]*rxTrial) *sampler {
	return startSamplerOf(spec, start, states, rx, false)
}

func startSamplerOf(spec Spec, start time.Time, states []*streamState, rx [2]*rxTrial, partial bool) *sampler {
	if spec.OnInterval == nil {
		return nil
	}
	s := &sampler{spec: spec, start: start, stop: make(chan struct{}), done: make(chan struct{}), partial: partial}
	n := Intervals(spec)
	go func() {
		defer close(s.done)
		for k := 1; k < n; k++ {
			t := time.NewTimer(time.Until(start.Add(time.Duration(k) * IntervalPeriod)))
			select {
			case <-s.stop:
				t.Stop()
				return
			case <-t.C:
			}
			var sent uint64
			for _, st := range states {
				sent += st.sentPub.Load()
			}
			// The end is when the counts were read (a slow OnInterval
			// makes a later one longer, never loses frames).
			iv := s.b.next(time.Since(start), sent, takeAll(rx), false)
			if partial {
				iv.Partial, iv.LossSoFarPercent = true, 0
			}
			spec.OnInterval(iv)
		}
	}()
	return s
}

func takeAll(rx [2]*rxTrial) liveCounts {
	var c liveCounts
	c.reset()
	for _, t := range rx {
		if t != nil && t.live != nil {
			c.add(t.live.take())
		}
	}
	return c
}

// finish stops the periodic samples and reports the final interval: the
// transmitters and receivers have stopped, so their counts are final.
func (s *sampler) finish(states []*streamState, rx [2]*rxTrial) {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
	var sent uint64
	for _, st := range states {
		sent += st.sent
	}
	end := max(time.Since(s.start), s.b.lastEnd)
	s.spec.OnInterval(s.b.next(end, sent, takeAll(rx), true))
}
