package rfc2544

import (
	"math"
	"math/bits"

	"github.com/rfc2544/rfc2544/trials"
)

// simHist is a streaming log-linear histogram of non-negative nanosecond
// values: exact below 128 ns, then 64 buckets per power of two (values
// within 1/64 of each other share a bucket), up to about 2^42 ns (73 min);
// larger values land in the last bucket. Memory is fixed; record does not
// allocate.
type simHist struct {
	counts         [histBuckets]uint64
	n              uint64
	min, max       int64
	sum            float64
	loIdx, hiIdx   int // touched range, so reset clears only that
	touchedAnyData bool
}

const (
	histSubBits = 6
	histSub     = 1 << histSubBits // 64
	histMaxExp  = 36
	histBuckets = (histMaxExp + 2) * histSub
)

func histIndex(v int64) int {
	if v < 2*histSub {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - histSubBits - 1
	if shift > histMaxExp {
		return histBuckets - 1
	}
	return shift*histSub + int(v>>shift)
}

// histUpper is the largest value of bucket i.
func histUpper(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	shift := i/histSub - 1
	m := int64(i - shift*histSub)
	return (m+1)<<shift - 1
}

func (h *simHist) reset() {
	if h.touchedAnyData {
		clear(h.counts[h.loIdx : h.hiIdx+1])
	}
	h.n, h.min, h.max, h.sum = 0, 0, 0, 0
	h.loIdx, h.hiIdx, h.touchedAnyData = 0, 0, false
}

func (h *simHist) record(v int64) {
	v = max(v, 0)
	i := histIndex(v)
	h.counts[i]++
	if !h.touchedAnyData {
		h.touchedAnyData = true
		h.loIdx, h.hiIdx, h.min, h.max = i, i, v, v
	}
	h.loIdx, h.hiIdx = min(h.loIdx, i), max(h.hiIdx, i)
	h.min, h.max = min(h.min, v), max(h.max, v)
	h.n++
	h.sum += float64(v)
}

// quantile is the upper bound of the bucket holding the q-quantile,
// clamped to the observed range.
func (h *simHist) quantile(q float64) int64 {
	want := uint64(math.Ceil(q * float64(h.n)))
	var cum uint64
	for i := h.loIdx; i <= h.hiIdx; i++ {
		cum += h.counts[i]
		if cum >= want && cum > 0 {
			return min(max(histUpper(i), h.min), h.max)
		}
	}
	return h.max
}

// summary is the histogram as a LatencySummary with at most 33 cumulative
// buckets (one each time another 1/32 of the values is passed, and the
// last). Count is the number of values recorded; IPDV fields are left zero.
func (h *simHist) summary() trials.LatencySummary {
	if h.n == 0 {
		return trials.LatencySummary{}
	}
	l := trials.LatencySummary{
		Count:  h.n,
		MinNs:  h.min,
		MaxNs:  h.max,
		MeanNs: h.sum / float64(h.n),
		P50Ns:  h.quantile(0.5),
		P90Ns:  h.quantile(0.9),
		P99Ns:  h.quantile(0.99),
		P999Ns: h.quantile(0.999),
	}
	l.PDVP999Ns = l.P999Ns - l.MinNs
	var cum, level uint64
	for i := h.loIdx; i <= h.hiIdx; i++ {
		if h.counts[i] == 0 {
			continue
		}
		cum += h.counts[i]
		if lv := cum * 32 / h.n; lv > level || i == h.hiIdx {
			l.Buckets = append(l.Buckets, trials.LatencyBucket{UpToNs: min(histUpper(i), h.max), Cumulative: cum})
			level = lv
		}
	}
	return l
}
