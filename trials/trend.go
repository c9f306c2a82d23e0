package trials

import (
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat"
)

// The receiver's latency time series: one-way latency against send time in
// fixed bins, per stream per trial, so a trial whose latency climbs through
// it (a queue absorbing a load the DUT cannot sustain) can be told from one
// that is merely slow.
const (
	// trendBins is how many bins a stream keeps: memory is fixed
	// (trendBins × 24 B) whatever the trial length.
	trendBins = 1024
	// trendBinNs is the starting bin width. When a frame falls beyond the
	// last bin, neighbouring bins merge pairwise and the width doubles, so
	// a 1 s trial has 100 bins of 10 ms and a 60 s one 750 of 80 ms.
	trendBinNs = int64(10 * time.Millisecond)
	// trendMaxSpanNs bounds the send-time offset a frame may have from the
	// first one counted; anything further (a corrupted timestamp) is left
	// out of the series rather than widening every bin.
	trendMaxSpanNs = int64(24 * time.Hour)
)

// trendBin is one bin of the series: frames sent in it, their minimum and
// summed latency (ns).
type trendBin struct {
	n   uint64
	min int64
	sum float64
}

// trendRecorder bins latency by send time from the first frame counted. It
// does not allocate after newTrendRecorder.
type trendRecorder struct {
	originNs int64 // send time (Unix ns) of the first frame counted
	have     bool
	widthNs  int64
	used     int // bins in use: highest index + 1
	bins     [trendBins]trendBin
}

func newTrendRecorder() *trendRecorder { return &trendRecorder{widthNs: trendBinNs} }

// record adds a frame sent at txNs (Unix ns) with latency d (ns, already
// clamped at zero). The first frame counted is the origin; one sent before
// it (reordered) counts in the first bin.
func (r *trendRecorder) record(txNs, d int64) {
	if !r.have {
		r.originNs, r.have = txNs, true
	}
	off := max(txNs-r.originNs, 0)
	if off > trendMaxSpanNs {
		return
	}
	i := off / r.widthNs
	for i >= trendBins {
		r.coalesce()
		i = off / r.widthNs
	}
	b := &r.bins[i]
	if b.n == 0 || d < b.min {
		b.min = d
	}
	b.n++
	b.sum += float64(d)
	r.used = max(r.used, int(i)+1)
}

// coalesce merges bins pairwise and doubles the width.
func (r *trendRecorder) coalesce() {
	for j := range trendBins / 2 {
		a, b := r.bins[2*j], r.bins[2*j+1]
		m := a
		switch {
		case a.n == 0:
			m = b
		case b.n > 0:
			m = trendBin{n: a.n + b.n, min: min(a.min, b.min), sum: a.sum + b.sum}
		}
		r.bins[j] = m
	}
	clear(r.bins[trendBins/2:])
	r.widthNs *= 2
	r.used = (r.used + 1) / 2
}

// trend renders the series and its fit; nil when too few bins have frames
// to fit a line (see minTrendBins).
func (r *trendRecorder) trend() *LatencyTrend {
	if !r.have {
		return nil
	}
	t := &LatencyTrend{BinNs: r.widthNs}
	for _, b := range r.bins[:r.used] {
		t.Count = append(t.Count, b.n)
		if b.n == 0 {
			t.MinNs = append(t.MinNs, 0)
			t.MeanNs = append(t.MeanNs, 0)
			continue
		}
		t.MinNs = append(t.MinNs, b.min)
		t.MeanNs = append(t.MeanNs, int64(math.Round(b.sum/float64(b.n))))
	}
	if !t.Fit() {
		return nil
	}
	return t
}

// LatencyTrend is a stream's one-way latency against send time through one
// trial: fixed bins of send time from the first frame received (the
// receiver's time series), and a straight line fitted through them. A
// growing queue in the DUT shows as a slope: latency rising by Δ ns per
// second of the trial means the DUT forwards offered/(1+Δ/1e9) frames per
// second, the rest piling up in its buffer.
type LatencyTrend struct {
	// BinNs is the width of every bin in ns (10 ms, doubled as often as a
	// long trial needs to stay within 1024 bins).
	BinNs int64 `json:"bin_ns"`
	// Count, MinNs and MeanNs are per bin, in send order: frames received
	// that were sent in the bin, and their minimum and mean latency in ns
	// (zero for a bin without frames).
	Count  []uint64 `json:"count"`
	MinNs  []int64  `json:"min_ns"`
	MeanNs []int64  `json:"mean_ns"`

	// The fit: a weighted least-squares line (gonum stat.LinearRegression,
	// weights = frames per bin) of each bin's minimum latency against the
	// time of the bin's centre. The minimum is the delay no frame of the bin
	// escaped, the queue's own: a stall of a few ms that delays some frames
	// of a bin moves the mean but not the minimum.
	//
	// SlopeNsPerS is the latency gained per second of the trial (ns/s);
	// SlopeSENsPerS its standard error (from the residuals, over Bins − 2
	// degrees of freedom); InterceptNs the line's value at the first bin's
	// centre; RSquared the fit's coefficient of determination.
	SlopeNsPerS   float64 `json:"slope_ns_per_s"`
	SlopeSENsPerS float64 `json:"slope_se_ns_per_s"`
	InterceptNs   float64 `json:"intercept_ns"`
	RSquared      float64 `json:"r_squared"`
	// Bins is how many bins had frames (the points fitted); SpanS the time
	// from the first to the last of their centres, in seconds.
	Bins  int     `json:"bins"`
	SpanS float64 `json:"span_s"`
	// FirstNs is the first bin's minimum latency; BaseNs the lowest bin
	// minimum over the first tenth of the span (at least the first bin):
	// the latency before any queue, robust to one slow first bin.
	FirstNs int64 `json:"first_bin_ns"`
	BaseNs  int64 `json:"base_ns"`
	// RiseNs is the fitted rise over the trial, SlopeNsPerS × SpanS.
	RiseNs int64 `json:"rise_ns"`
	// StepNs is the rise seen without the line: the median bin minimum of
	// the last quarter of the span less that of the first quarter, scaled
	// by 4/3 (the distance between the quarters' centres is 3/4 of the
	// span). A growing queue moves both alike; a transient spike, shorter
	// than a quarter of the trial, moves neither median.
	StepNs int64 `json:"step_ns"`
}

// minTrendBins is the fewest bins with frames a trend is fitted over.
const minTrendBins = 4

// Fit computes the fit fields from BinNs, Count, MinNs (and MeanNs, kept
// as is). It reports false, and leaves the fit zero, when fewer than four
// bins have frames. Exported so a simulator can build a series and have it
// fitted exactly as the receiver's.
func (t *LatencyTrend) Fit() bool {
	var xs, ys, ws []float64
	for i, n := range t.Count {
		if n == 0 || i >= len(t.MinNs) {
			continue
		}
		xs = append(xs, (float64(i)+0.5)*float64(t.BinNs)/1e9)
		ys = append(ys, float64(t.MinNs[i]))
		ws = append(ws, float64(n))
	}
	t.SlopeNsPerS, t.SlopeSENsPerS, t.InterceptNs, t.RSquared = 0, 0, 0, 0
	t.Bins, t.SpanS, t.FirstNs, t.BaseNs, t.RiseNs, t.StepNs = len(xs), 0, 0, 0, 0, 0
	if len(xs) < minTrendBins {
		return false
	}
	x0 := xs[0]
	for i := range xs {
		xs[i] -= x0
	}
	alpha, beta := stat.LinearRegression(xs, ys, ws, false)
	t.SlopeNsPerS, t.InterceptNs = beta, alpha
	t.RSquared = stat.RSquared(xs, ys, ws, alpha, beta)
	if math.IsNaN(t.RSquared) { // every bin the same latency
		t.RSquared = 0
	}
	// Standard error of a weighted least-squares slope, the weights taken
	// as relative precisions: s² = Σw·r²/(n−2) / Σw·(x−x̄)².
	xm := stat.Mean(xs, ws)
	var ssr, sxx float64
	for i, x := range xs {
		r := ys[i] - alpha - beta*x
		ssr += ws[i] * r * r
		sxx += ws[i] * (x - xm) * (x - xm)
	}
	if sxx > 0 {
		t.SlopeSENsPerS = math.Sqrt(ssr / float64(len(xs)-2) / sxx)
	}
	t.SpanS = xs[len(xs)-1]
	t.FirstNs = int64(ys[0])
	t.BaseNs = int64(ys[0])
	for i, x := range xs {
		if x <= t.SpanS/10 {
			t.BaseNs = min(t.BaseNs, int64(ys[i]))
		}
	}
	t.RiseNs = int64(math.Round(beta * t.SpanS))
	var first, last []float64
	for i, x := range xs {
		switch {
		case x <= t.SpanS/4:
			first = append(first, ys[i])
		case x >= t.SpanS*3/4:
			last = append(last, ys[i])
		}
	}
	if len(first) > 0 && len(last) > 0 {
		t.StepNs = int64(math.Round((medianOf(last) - medianOf(first)) * 4 / 3))
	}
	return true
}

// medianOf is the median of a non-empty slice, which it sorts.
func medianOf(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// The sustained-rate test (see Result.Sustained).
const (
	// SustainMinT is the t-statistic (slope / its standard error) above
	// which a slope is significant: noise and host stalls on the lab gave
	// at most TODO below the shaped rate, growing queues TODO and more.
	SustainMinT = 5
	// SustainMinRise and SustainBaseFactor set the rise that matters:
	// more than max(SustainMinRise, SustainBaseFactor × BaseNs).
	SustainMinRise    = time.Millisecond
	SustainBaseFactor = 10
)

// SustainVerdict explains Result.Sustained.
type SustainVerdict struct {
	// GrowthNs is the fitted latency rise over the trial (the worst stream).
	GrowthNs int64 `json:"growth_ns"`
	// SlopeNsPerS is that stream's latency slope, ns per s of trial.
	SlopeNsPerS float64 `json:"slope_ns_per_s"`
	// SustainedFPS estimates the rate the DUT forwards: each growing
	// stream's offered rate / (1 + slope) (slope in s of delay per s),
	// plus the offered rate of every other stream. Zero without trend data.
	SustainedFPS float64 `json:"sustained_fps,omitempty"`
	// BufferFrames estimates the frames queued in the DUT at the end of the
	// trial: rise × sustained rate, summed over the growing streams.
	BufferFrames float64 `json:"buffer_frames,omitempty"`
	// Reason says why the trial is not sustained; empty when it is.
	Reason string `json:"reason,omitempty"`
}

// Growing applies the sustained-rate test to one trend: the queue grew
// through the trial when the slope is positive and significant (t ≥
// SustainMinT), and the rise over the trial both fitted (RiseNs) and seen
// between the first and last quarters (StepNs) exceeds max(SustainMinRise,
// SustainBaseFactor × BaseNs). A nil trend never grows.
func (t *LatencyTrend) Growing() bool {
	if t == nil || t.SlopeNsPerS <= 0 {
		return false
	}
	if t.SlopeSENsPerS > 0 && t.SlopeNsPerS/t.SlopeSENsPerS < SustainMinT {
		return false
	}
	thr := max(int64(SustainMinRise), SustainBaseFactor*t.BaseNs)
	return t.RiseNs > thr && t.StepNs > thr
}

// Sustained reports whether the DUT sustained the trial's load: ok is false
// when some stream's latency grew through the trial (LatencyTrend.Growing),
// that is, its queue absorbed a load it cannot forward, so a longer trial
// would lose frames. A trial without trend data (too few frames, or a
// tester that does not keep one) is sustained. v carries the estimate of
// the rate the DUT does sustain, offered/(1+slope), and the buffer used.
func (r Result) Sustained() (ok bool, v SustainVerdict) {
	ok = true
	var worst *StreamResult
	have := false
	for i := range r.Streams {
		s := &r.Streams[i]
		t := s.Trend
		if t == nil {
			v.SustainedFPS += s.OfferedFPS
			continue
		}
		have = true
		if !t.Growing() {
			v.SustainedFPS += s.OfferedFPS
			if ok && t.RiseNs > v.GrowthNs {
				v.GrowthNs, v.SlopeNsPerS = t.RiseNs, t.SlopeNsPerS
			}
			continue
		}
		fps := s.OfferedFPS / (1 + t.SlopeNsPerS/1e9)
		v.SustainedFPS += fps
		v.BufferFrames += float64(t.RiseNs) / 1e9 * fps
		if ok || t.RiseNs > worst.Trend.RiseNs {
			worst = s
			v.GrowthNs, v.SlopeNsPerS = t.RiseNs, t.SlopeNsPerS
		}
		ok = false
	}
	if !have {
		return true, SustainVerdict{}
	}
	if !ok {
		t := worst.Trend
		who := ""
		if len(r.Streams) > 1 {
			who = fmt.Sprintf("stream %d: ", worst.ID)
		}
		v.Reason = fmt.Sprintf("%squeue growing: %+.3g ms over %.3g s; sustained rate ≈ %.0f fps (offered/(1+slope)); buffer used ≈ %.0f frames",
			who, float64(t.RiseNs)/1e6, t.SpanS, v.SustainedFPS, v.BufferFrames)
	}
	return ok, v
}
