package rfc2544

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// SimDUT is a simulated tester and device under test in one Tester, so every
// procedure can be tested without root, deterministically and fast: a trial
// is computed, not played out, and the same Seed gives the same results.
//
// # The model
//
// Each stream (direction) meets its own copy of the DUT: a FIFO queue of
// Buffer frames in front of a forwarding engine that serves C frames per
// second (the lower of CapacityFPS and CapacityBps at the frame size; each
// trial draws C uniformly from [C·(1−Noise), C], the run-to-run variation of
// a real DUT). Traffic is a fluid at the offered rate R (piecewise constant:
// one segment for a timed trial or a burst, two with a rate change). While
// R > C the queue grows at R−C; once full, the DUT accepts only C and loses
// R−C frames per second. While R ≤ C the queue drains at C−R and nothing is
// lost. So a burst of N frames at R loses
//
//	max(0, N·(1 − C/R) − B)
//
// frames: during its N/R seconds the engine forwards N·C/R and the queue
// holds B; the longest lossless burst is B·R/(R−C), and RFC 9004's corrected
// buffer time, Implied × (1 − C/R), comes back as exactly B/R. Any positive
// fluid loss counts as at least one lost frame (a frame is lost as soon as
// the queue would overflow). Frames still queued when the traffic ends drain
// at C; those that would arrive after the settle wait are late, and lost.
// Then each accepted frame is lost with LossProbability (the count drawn
// from the seeded generator with the right mean).
//
// Latency of a frame = BaseLatency + serialization (F·8/LinkBps) + its
// queueing delay (queue length ahead of it / C) + a uniform [0, Jitter)
// draw. Minimum and maximum come from the model (every frame); the mean,
// percentiles and delay variation from 512 frames per stream spread evenly
// over the forwarded frames, each timed by the model (with the frame just
// before it, for IPDV), through a streaming log-linear histogram (64
// sub-buckets per power of two, about 1.6% resolution): memory does not grow
// with the trial.
//
// The latency trend (trials.LatencyTrend, the receiver's series of latency
// against send time) comes from the same model: bins of 10 ms of send time
// (doubled until at most 1024 cover the trial), each holding the frames the
// DUT accepted then (the received count spread over them), their mean send
// time, and the latency of its queue: the minimum at the bin's emptiest
// point (plus the expected minimum of the jitter draws, Jitter/(n+1)), the
// mean at its average (plus Jitter/2). It is fitted as the receiver's is,
// so a trial whose queue grows is not sustained (trials.Result.Sustained)
// and its estimate is the capacity C. The trend draws nothing from the seed.
//
// System recovery: a plain drop-tail queue recovers at once (when the rate
// drops below C the queue only shrinks, so the last lost frame is the last
// one sent before the change). RecoveryDelay models a DUT that needs time to
// recover: after an overload in which it lost frames, it drops every arrival
// for RecoveryDelay once the load falls below its capacity, while its queue
// drains; the recovery time is then RecoveryDelay.
//
// The tester: it sends at most TesterCeilingFPS per stream and at most line
// rate (LinkBps); a trial asking more is sent at the ceiling and marked
// tester-limited (offered < intended). Frames larger than MaxFrameSize are
// all lost (a path MTU). Result.Start follows a virtual clock that advances
// by each trial's learning, traffic and settle time.
type SimDUT struct {
	// LinkBps is the line rate of the ports in bit/s: the tester cannot send
	// faster, and each frame takes F·8/LinkBps to serialize. Zero: no limit,
	// no serialization delay.
	LinkBps float64
	// CapacityFPS is the forwarding capacity per direction in frames/s.
	// Zero: no frame-rate limit.
	CapacityFPS float64
	// CapacityBps is the forwarding capacity per direction in L1 bit/s
	// (frame plus 20 bytes of preamble and gap), so CapacityBps/LinkBps is
	// the same fraction of line rate at every size. Zero: no bit-rate limit.
	// With both limits the lower rate wins at each size; with neither the
	// DUT forwards anything it is sent.
	CapacityBps float64
	// BufferFrames and BufferBytes size the queue (per direction); with both
	// the smaller, in frames at each size, counts. Zero both: no buffer.
	BufferFrames int64
	BufferBytes  int64
	// BaseLatency is every frame's fixed delay through the DUT.
	BaseLatency time.Duration
	// Jitter adds a uniform [0, Jitter) delay to every frame, independently.
	Jitter time.Duration
	// LossProbability is the chance that any forwarded frame is lost.
	LossProbability float64
	// Noise is the run-to-run capacity variation, a fraction in [0, 1): each
	// trial's capacity is drawn uniformly from [C·(1−Noise), C].
	Noise float64
	// Seed makes the random draws (noise, random loss, jitter) repeatable.
	Seed uint64
	// TesterCeilingFPS is the most the simulated tester sends per stream;
	// zero is no ceiling below line rate.
	TesterCeilingFPS float64
	// MaxFrameSize, when positive, is the largest frame the path carries;
	// bigger frames are all lost.
	MaxFrameSize int
	// RecoveryDelay is how long the DUT keeps dropping arrivals after an
	// overload ends (see the model above). Zero: a plain drop-tail queue.
	RecoveryDelay time.Duration

	mu     sync.Mutex
	rng    *rand.Rand
	clock  time.Duration
	trials int
	hist   simHist
}

var _ Tester = (*SimDUT)(nil)

// simEpoch is the virtual clock's zero.
var simEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// simSamples is how many frames per stream the latency statistics sample.
const simSamples = 512

// ForwardingFPS is the DUT's nominal forwarding capacity at a frame size in
// frames/s, +Inf when it has no limit.
func (s *SimDUT) ForwardingFPS(frameSize int) float64 {
	c := math.Inf(1)
	if s.CapacityFPS > 0 {
		c = s.CapacityFPS
	}
	if s.CapacityBps > 0 {
		c = min(c, s.CapacityBps/((framing.MeanFrameSize(frameSize)+framing.L1Overhead)*8))
	}
	return c
}

// Buffer is the DUT's queue at a frame size, in frames.
func (s *SimDUT) Buffer(frameSize int) float64 {
	b := math.Inf(1)
	if s.BufferFrames > 0 {
		b = float64(s.BufferFrames)
	}
	if s.BufferBytes > 0 {
		b = min(b, math.Floor(float64(s.BufferBytes)/framing.MeanFrameSize(frameSize)))
	}
	if math.IsInf(b, 1) {
		return 0
	}
	return b
}

// Trials is how many trials the SimDUT has run.
func (s *SimDUT) Trials() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trials
}

// Run implements Tester.
func (s *SimDUT) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	res := trials.Result{Spec: spec, Paths: trials.Paths{Transport: "sim", TX: "sim", RX: "sim", Timestamps: "sim"}}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := spec.Validate(); err != nil {
		return res, fmt.Errorf("sim: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(s.Seed, 0x2544))
	}
	s.trials++
	res.Start = simEpoch.Add(s.clock + spec.Learning)
	capFactor := 1 - s.Noise*s.rng.Float64()
	var traffic float64
	tls := make([]simTimeline, len(spec.Streams))
	for i, st := range spec.Streams {
		sr, err := s.stream(spec, st, capFactor, &res, &tls[i])
		if err != nil {
			return res, err
		}
		traffic = max(traffic, sr.TxSeconds)
		res.Streams = append(res.Streams, sr)
	}
	res.Spec.OnInterval = nil
	if spec.OnInterval != nil {
		for i := range tls {
			tls[i].sent, tls[i].received = res.Streams[i].Sent, res.Streams[i].Received
		}
		simIntervals(spec, tls, traffic, spec.OnInterval)
	}
	s.clock += spec.Learning + time.Duration(traffic*float64(time.Second)) + spec.Settle
	return res, nil
}

// segment is a stretch of constant offered rate.
type segment struct{ rate, dur float64 }

// piece is a stretch of the fluid model where arrival and acceptance rates
// are constant and the queue changes linearly from q0 to q1.
type piece struct{ t0, t1, arr, acc, q0, q1 float64 }

func (p piece) q(t float64) float64 {
	if p.t1 <= p.t0 {
		return p.q0
	}
	return p.q0 + (p.q1-p.q0)*(t-p.t0)/(p.t1-p.t0)
}

func (s *SimDUT) stream(spec trials.Spec, st trials.Stream, capFactor float64, res *trials.Result, tl *simTimeline) (trials.StreamResult, error) {
	sr := trials.StreamResult{ID: st.ID, Direction: st.Direction, TaggedLatencyNs: -1, LastLossNs: -1}
	f := spec.FrameSize
	line := math.Inf(1)
	if s.LinkBps > 0 {
		line = framing.LineRateFPS(s.LinkBps, f)
	}
	ceil := line
	if s.TesterCeilingFPS > 0 {
		ceil = min(ceil, s.TesterCeilingFPS)
	}
	r := spec.RateFPS
	if r == 0 { // a burst as fast as the tester can
		if math.IsInf(ceil, 1) {
			return sr, fmt.Errorf("sim: rate_fps 0 (as fast as possible) needs SimDUT.LinkBps or TesterCeilingFPS")
		}
		r = ceil
	}
	// The intended segments, then what the tester offers.
	var segs []segment
	switch {
	case spec.BurstFrames > 0:
		segs = []segment{{r, float64(spec.BurstFrames) / r}}
	case spec.RateChange != nil && spec.RateChange.At < spec.Duration:
		at := spec.RateChange.At.Seconds()
		segs = []segment{{r, at}, {spec.RateChange.RateFPS, spec.Duration.Seconds() - at}}
	default:
		segs = []segment{{r, spec.Duration.Seconds()}}
	}
	var intended, sent, tx float64
	for i, g := range segs {
		intended += g.rate * g.dur
		if g.rate > ceil*(1+1e-9) {
			res.TesterLimited = true
			res.TesterLimitReason = fmt.Sprintf("sim tester ceiling: %.0f fps offered of %.0f fps intended per stream", ceil, g.rate)
			if spec.BurstFrames > 0 { // the same frames, sent slower
				g.dur = g.rate * g.dur / ceil
			}
			g.rate = ceil
		}
		segs[i] = g
		sent += g.rate * g.dur
		tx += g.dur
	}
	sr.IntendedFPS = intended / tx
	if spec.BurstFrames > 0 {
		sr.IntendedFPS = r
		sent = float64(spec.BurstFrames)
	}
	sr.Sent = uint64(math.Floor(sent + 1e-6)) // whole frames, never above the rate
	if sent > 0 {                             // the fluid carries exactly the frames sent
		k := float64(sr.Sent) / sent
		for i := range segs {
			segs[i].rate *= k
		}
	}
	sr.TxSeconds = tx
	sr.OfferedFPS = float64(sr.Sent) / tx
	tl.segs = segs
	txNs := int64(tx * 1e9)

	if s.MaxFrameSize > 0 && framing.LargestFrame(f) > s.MaxFrameSize {
		sr.Lost = sr.Sent
		if sr.Lost > 0 {
			sr.LastLossNs = txNs
		}
		return sr, nil
	}

	c := s.ForwardingFPS(f) * capFactor
	b := s.Buffer(f)
	pieces, qEnd := s.fluid(segs, c, b)
	tl.pieces, tl.c = pieces, c

	// Queue losses, late frames, random losses.
	var fluidLoss, lastQLoss float64
	lastQLoss = -1
	for _, p := range pieces {
		if l := (p.arr - p.acc) * (p.t1 - p.t0); l > 1e-9 {
			fluidLoss += l
			lastQLoss = max(p.t0, p.t1-1/p.arr)
		}
	}
	lost := uint64(0)
	if fluidLoss > 1e-6 {
		lost = uint64(math.Ceil(fluidLoss - 1e-6))
	}
	lastLoss := lastQLoss
	base := s.BaseLatency.Seconds()
	if s.LinkBps > 0 {
		base += float64(f*8) / s.LinkBps
	}
	tl.base = base
	if !math.IsInf(c, 1) && qEnd > 0 {
		drain := c * max(0, spec.Settle.Seconds()-base)
		if late := math.Ceil(qEnd - drain - 1e-9); late > 0 {
			sr.Late = uint64(late)
			lost += sr.Late
			lastLoss = tx - 1/segs[len(segs)-1].rate
		}
	}
	lost = min(lost, sr.Sent)
	accepted := sr.Sent - lost
	if p := s.LossProbability; p > 0 && accepted > 0 {
		k := uint64(math.Floor(float64(accepted)*p + s.rng.Float64()))
		k = min(k, accepted)
		lost += k
		if k > 0 {
			lastLoss = max(lastLoss, tx*(1-s.rng.Float64()/float64(k+1)))
		}
	}
	sr.Lost = lost
	sr.Received = sr.Sent - lost
	if lost > 0 {
		sr.LastLossNs = max(0, int64(lastLoss*1e9))
	}
	if sr.Received == 0 {
		return sr, nil
	}
	sr.Latency = s.latency(pieces, c, base, sr.Received, spec.TagAfter > 0)
	sr.Trend = s.trend(pieces, c, base, sr.Received, sr.Late, tx)

	// The tagged frame.
	if spec.TagAfter > 0 {
		t := spec.TagAfter.Seconds()
		if i := pieceAt(pieces, t); i >= 0 {
			p := pieces[i]
			if s.rng.Float64() < p.acc/p.arr && s.rng.Float64() >= s.LossProbability {
				sr.TaggedLatencyNs = int64((base + s.queueDelay(p.q(t), c) + s.jitter()) * 1e9)
			}
		}
	}
	return sr, nil
}

// fluid runs the queue model over the segments and returns its pieces and
// the queue left when traffic ends, in frames.
func (s *SimDUT) fluid(segs []segment, c, b float64) ([]piece, float64) {
	pieces := make([]piece, 0, 2*len(segs)+1)
	var t, q float64
	overloaded := false
	for _, g := range segs {
		end := t + g.dur
		r := g.rate
		if overloaded && s.RecoveryDelay > 0 && r <= c {
			ds := min(s.RecoveryDelay.Seconds(), g.dur)
			q1 := max(0, q-c*ds)
			pieces = append(pieces, piece{t, t + ds, r, 0, q, q1})
			t, q = t+ds, q1
		}
		overloaded = false
		for end-t > 1e-12 {
			switch {
			case math.IsInf(c, 1):
				pieces = append(pieces, piece{t, end, r, r, 0, 0})
				t = end
			case r > c && q < b:
				tf := (b - q) / (r - c)
				if t+tf >= end {
					q1 := q + (r-c)*(end-t)
					pieces = append(pieces, piece{t, end, r, r, q, q1})
					t, q = end, q1
				} else {
					pieces = append(pieces, piece{t, t + tf, r, r, q, b})
					t, q = t+tf, b
				}
			case r > c:
				pieces = append(pieces, piece{t, end, r, c, q, q})
				t = end
				overloaded = true
			case q > 0 && r < c:
				td := q / (c - r)
				if t+td >= end {
					q1 := q - (c-r)*(end-t)
					pieces = append(pieces, piece{t, end, r, r, q, q1})
					t, q = end, q1
				} else {
					pieces = append(pieces, piece{t, t + td, r, r, q, 0})
					t, q = t+td, 0
				}
			default:
				pieces = append(pieces, piece{t, end, r, r, q, q})
				t = end
			}
		}
	}
	return pieces, q
}

func pieceAt(pieces []piece, t float64) int {
	for i, p := range pieces {
		if t >= p.t0 && t < p.t1 {
			return i
		}
	}
	return -1
}

func (s *SimDUT) queueDelay(q, c float64) float64 {
	if math.IsInf(c, 1) || c <= 0 {
		return 0
	}
	return q / c
}

func (s *SimDUT) jitter() float64 {
	if s.Jitter <= 0 {
		return 0
	}
	return s.rng.Float64() * s.Jitter.Seconds()
}

// latency times simSamples frames spread evenly over the accepted ones.
// withHist keeps the histogram in the summary: the latency test's trials
// (they carry a tagged frame) need it for MergeLatency, and encoding it
// for every search trial would be most of a simulated run's time.
func (s *SimDUT) latency(pieces []piece, c, base float64, received uint64, withHist bool) trials.LatencySummary {
	var acc float64
	for _, p := range pieces {
		acc += p.acc * (p.t1 - p.t0)
	}
	h := &s.hist
	h.reset()
	var ipdvSum, jit float64
	var ipdvMax int64
	i, before := 0, 0.0 // current piece, accepted frames before it
	for j := range simSamples {
		a := (float64(j) + 0.5) / simSamples * acc
		for i < len(pieces)-1 && before+pieces[i].acc*(pieces[i].t1-pieces[i].t0) < a {
			before += pieces[i].acc * (pieces[i].t1 - pieces[i].t0)
			i++
		}
		p := pieces[i]
		t := p.t0
		if p.acc > 0 {
			t = min(p.t1, p.t0+(a-before)/p.acc)
		}
		d := base + s.queueDelay(p.q(t), c) + s.jitter()
		tp := max(p.t0, t-1/p.arr) // the frame sent just before
		dp := base + s.queueDelay(p.q(tp), c) + s.jitter()
		ns := int64(d * 1e9)
		h.record(ns)
		ipdv := ns - int64(dp*1e9)
		if ipdv < 0 {
			ipdv = -ipdv
		}
		ipdvSum += float64(ipdv)
		ipdvMax = max(ipdvMax, ipdv)
		jit += (float64(ipdv) - jit) / 16
	}
	l := h.summary(withHist)
	// The sample can miss the extremes (a queue ramp of a few frames among
	// millions): take them from the model, where every frame is seen.
	minQ, maxQ := math.Inf(1), 0.0
	for _, p := range pieces {
		if p.acc > 0 {
			minQ, maxQ = min(minQ, p.q0, p.q1), max(maxQ, p.q0, p.q1)
		}
	}
	if !math.IsInf(minQ, 1) {
		l.MinNs = min(l.MinNs, int64((base+s.queueDelay(minQ, c))*1e9))
		l.MaxNs = max(l.MaxNs, int64((base+s.queueDelay(maxQ, c)+s.Jitter.Seconds())*1e9))
		l.PDVP999Ns = l.P999Ns - l.MinNs
	}
	l.Count = received
	l.IPDVMeanAbsNs = ipdvSum / simSamples
	l.IPDVMaxAbsNs = ipdvMax
	l.JitterNs = jit
	return l
}

// simTrendBins and simTrendBinNs mirror the receiver's series: at most 1024
// bins, 10 ms wide unless the trial needs wider.
const (
	simTrendBins  = 1024
	simTrendBinNs = int64(10 * time.Millisecond)
)

// trend renders the queue model as the receiver's latency series and fits
// it; nil when it has too few bins (as the receiver's).
func (s *SimDUT) trend(pieces []piece, c, base float64, received, late uint64, tx float64) *trials.LatencyTrend {
	var accepted float64
	for _, p := range pieces {
		accepted += p.acc * (p.t1 - p.t0)
	}
	if accepted <= 0 || received == 0 || tx <= 0 {
		return nil
	}
	width := simTrendBinNs
	for float64(width)*simTrendBins < tx*1e9 {
		width *= 2
	}
	w := float64(width) / 1e9
	n := int(math.Ceil(tx/w - 1e-9))
	t := &trials.LatencyTrend{BinNs: width, Count: make([]uint64, n), SentNs: make([]int64, n),
		MinNs: make([]int64, n), MeanNs: make([]int64, n)}
	// Random losses are spread evenly; late frames are the last ones sent
	// (the queue left at the end), taken off the last bins below.
	scale := float64(received+late) / accepted
	var cum float64 // received frames sent before the bin
	jit := s.Jitter.Seconds()
	for i := range n {
		b0, b1 := float64(i)*w, min(float64(i+1)*w, tx)
		var frames, sumT, sumQ float64
		minQ := math.Inf(1)
		for _, p := range pieces {
			a, b := max(b0, p.t0), min(b1, p.t1)
			if b <= a || p.acc <= 0 {
				continue
			}
			f := p.acc * (b - a)
			frames += f
			sumT += f * (a + b) / 2
			sumQ += f * p.q((a+b)/2)
			minQ = min(minQ, p.q(a), p.q(b))
		}
		if frames <= 0 {
			continue
		}
		// Whole frames: the cumulative count rounded at each bin's end.
		k := math.Round(cum+frames*scale) - math.Round(cum)
		cum += frames * scale
		if k <= 0 {
			continue
		}
		t.Count[i] = uint64(k)
		t.SentNs[i] = int64(math.Round(sumT / frames * 1e9))
		t.MinNs[i] = int64(math.Round((base + s.queueDelay(minQ, c) + jit/(k+1)) * 1e9))
		t.MeanNs[i] = int64(math.Round((base + s.queueDelay(sumQ/frames, c) + jit/2) * 1e9))
	}
	for i := n - 1; i >= 0 && late > 0; i-- {
		k := min(t.Count[i], late)
		t.Count[i] -= k
		late -= k
	}
	if !t.Fit() {
		return nil
	}
	t.TrimSeries()
	return t
}
