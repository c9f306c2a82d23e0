package rfc2544

import (
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rfc2544/rfc2544/trials"
)

// The latency histogram of the whole module is the engine's (trials): an
// HDR histogram of 1 ns to 100 s at 3 significant digits. A LatencySummary
// carries it encoded (HDR), so summaries of streams and repetitions are
// merged with the histogram's own Merge and every figure of the merge (the
// percentiles, PDV, the CDF) is read from one histogram.
const (
	histLowNs    = 1
	histHighNs   = 100e9
	histDigits   = 3
	maxHistBytes = 1 << 20 // an encoded histogram from an agent beyond this is refused
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowNs, histHighNs, histDigits) }

// encodeHist is h in the HdrHistogram V2 compressed format, base64, as
// other HdrHistogram tools read it.
func encodeHist(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

// decodeHist reads what encodeHist wrote; a histogram of another shape
// than newHist's is refused, so Merge loses nothing.
func decodeHist(s string) (*hdrhistogram.Histogram, error) {
	if len(s) > maxHistBytes {
		return nil, fmt.Errorf("latency histogram of %d bytes: more than %d", len(s), maxHistBytes)
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("latency histogram: %w", err)
	}
	if h.LowestTrackableValue() != histLowNs || h.HighestTrackableValue() < histHighNs || h.SignificantFigures() != histDigits {
		return nil, fmt.Errorf("latency histogram of range %d…%d ns at %d digits; want %d…%d ns at %d",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), int64(histLowNs), int64(histHighNs), histDigits)
	}
	return h, nil
}

// histStats fills the percentiles, PDV, CDF buckets and HDR of l from h;
// they are clamped to l's exact MinNs and MaxNs. PDV P99.9 is P99.9 − min
// by construction (RFC 5481 §4.2). The buckets are at full resolution when
// full is set (a test's merged result), else at most 33 (one trial's);
// the histogram itself is encoded in HDR when full or withHDR is set.
func histStats(l *trials.LatencySummary, h *hdrhistogram.Histogram, full, withHDR bool) {
	q := func(p float64) int64 { return min(max(h.ValueAtQuantile(p), l.MinNs), l.MaxNs) }
	l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns = q(50), q(90), q(99), q(99.9)
	l.PDVP999Ns = l.P999Ns - l.MinNs
	l.Buckets = histBuckets(h, l.MinNs, l.MaxNs)
	if !full {
		l.Buckets = coarseBuckets(l.Buckets)
	}
	l.HDR = ""
	if full || withHDR {
		l.HDR = encodeHist(h)
	}
}

// coarseBuckets keeps of a cumulative distribution the bucket where each
// further 1/32 of the values is passed, and the last.
func coarseBuckets(bs []trials.LatencyBucket) []trials.LatencyBucket {
	if len(bs) == 0 {
		return nil
	}
	n := bs[len(bs)-1].Cumulative
	var out []trials.LatencyBucket
	var level uint64
	for i, b := range bs {
		if lv := b.Cumulative * 32 / n; lv > level || i == len(bs)-1 {
			out = append(out, b)
			level = lv
		}
	}
	return out
}

// histBuckets is h's cumulative distribution at full resolution: one
// bucket per non-empty histogram bucket, its highest value (clamped to
// [lo, hi]) and the count at or below it.
func histBuckets(h *hdrhistogram.Histogram, lo, hi int64) []trials.LatencyBucket {
	var out []trials.LatencyBucket
	var cum uint64
	for _, b := range h.Distribution() {
		if b.Count <= 0 {
			continue
		}
		cum += uint64(b.Count)
		out = append(out, trials.LatencyBucket{UpToNs: min(max(b.To, lo), hi), Cumulative: cum})
	}
	return out
}

// simHist is the simulated DUT's latency sample (simSamples frames a
// stream): the values, their exact sum, min and max. A latency-test trial's
// summary comes from the module's histogram (so MergeLatency merges it);
// a search trial's from the sorted sample, as encoding a histogram per
// search trial would be most of a simulated run's time.
type simHist struct {
	v   []int64
	sum float64
	h   *hdrhistogram.Histogram
}

func (s *simHist) reset() {
	s.v, s.sum = s.v[:0], 0
}

// record adds v ns; it does not allocate once the sample has grown.
func (s *simHist) record(v int64) {
	v = max(v, 0)
	s.v = append(s.v, v)
	s.sum += float64(v)
}

// summary is the sample as a LatencySummary; IPDV fields are left zero.
// withHist reads it from the histogram and keeps the histogram (HDR).
func (s *simHist) summary(withHist bool) trials.LatencySummary {
	n := len(s.v)
	if n == 0 {
		return trials.LatencySummary{}
	}
	slices.Sort(s.v)
	l := trials.LatencySummary{Count: uint64(n), MinNs: s.v[0], MaxNs: s.v[n-1], MeanNs: s.sum / float64(n)}
	if withHist {
		if s.h == nil {
			s.h = newHist()
		}
		s.h.Reset()
		for _, v := range s.v {
			_ = s.h.RecordValue(min(max(v, histLowNs), histHighNs))
		}
		histStats(&l, s.h, false, true)
		return l
	}
	q := func(f float64) int64 { return s.v[max(int(math.Ceil(f*float64(n)))-1, 0)] }
	l.P50Ns, l.P90Ns, l.P99Ns, l.P999Ns = q(0.5), q(0.9), q(0.99), q(0.999)
	l.PDVP999Ns = l.P999Ns - l.MinNs
	for i, v := range s.v {
		if i == n-1 || s.v[i+1] != v {
			l.Buckets = append(l.Buckets, trials.LatencyBucket{UpToNs: v, Cumulative: uint64(i + 1)})
		}
	}
	l.Buckets = coarseBuckets(l.Buckets)
	return l
}
