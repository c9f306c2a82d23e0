package trials

import (
	"math"
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// windowWords is the size of a flow's duplicate-detection window in 64-bit
// words: 1024 words = 65 536 sequence numbers, 8 KiB per stream whatever the
// trial length. A frame arriving more than that many sequence numbers behind
// the newest is counted received and reordered but cannot be checked for
// duplication.
const windowWords = 1024

// seqWindow remembers which sequence numbers of one stream were received,
// over a sliding window. Sequence numbers that slide out of the window
// unreceived are lost (or arrive later than the window can tell).
type seqWindow struct {
	bits     [windowWords]uint64
	baseWord uint64 // word index (seq/64) of the oldest word kept
	top      uint64 // highest sequence number seen + 1; 0 = none yet
	// lastMissing is the highest sequence number known missing when it left
	// the window, or -1.
	lastMissing int64
}

func (w *seqWindow) reset() {
	clear(w.bits[:])
	w.baseWord, w.top, w.lastMissing = 0, 0, -1
}

// mark records seq. It reports whether seq was already received (dup) and
// whether it arrived after a higher sequence number (reordered). A frame too
// old for the window is reported reordered, never dup.
func (w *seqWindow) mark(seq uint64) (dup, reordered bool) {
	word := seq / 64
	if word < w.baseWord {
		return false, true
	}
	if word >= w.baseWord+windowWords {
		w.slide(word - windowWords + 1)
	}
	slot := &w.bits[word%windowWords]
	bit := uint64(1) << (seq % 64)
	if *slot&bit != 0 {
		return true, false
	}
	*slot |= bit
	if seq+1 < w.top {
		reordered = true
	}
	w.top = max(w.top, seq+1)
	return false, reordered
}

// slide moves the window so newBase is its oldest word, recording the highest
// sequence number that leaves it unreceived. Every sequence number leaving
// is below one already received, so unreceived ones were lost.
func (w *seqWindow) slide(newBase uint64) {
	for wd := w.baseWord; wd < newBase; wd++ {
		if wd >= w.baseWord+windowWords {
			// Beyond what was stored: entirely unreceived.
			w.lastMissing = int64(newBase*64 - 1)
			break
		}
		slot := &w.bits[wd%windowWords]
		if missing := ^*slot; missing != 0 {
			w.lastMissing = int64(wd*64 + 63 - uint64(bits.LeadingZeros64(missing)))
		}
		*slot = 0
	}
	w.baseWord = newBase
}

// highestMissing is the highest sequence number below sent never received,
// or -1 when none is missing.
func (w *seqWindow) highestMissing(sent uint64) int64 {
	if sent == 0 {
		return -1
	}
	if w.top < sent {
		return int64(sent - 1)
	}
	// Scan the window from the top down.
	for wd := (sent - 1) / 64; wd >= w.baseWord; wd-- {
		m := ^w.bits[wd%windowWords]
		if hi := wd*64 + 63; hi >= sent {
			m &= (uint64(1) << (sent - wd*64)) - 1
		}
		if m != 0 {
			return int64(wd*64 + 63 - uint64(bits.LeadingZeros64(m)))
		}
		if wd == 0 {
			break
		}
	}
	return w.lastMissing
}

// Latency histogram range: 1 ns to 100 s at 3 significant digits.
const (
	histMaxNs  = 100e9
	histDigits = 3
)

// latencyRecorder streams latencies into a histogram plus running sums for
// the exact min, max, mean, IPDV and RFC 3550 jitter. Memory is fixed.
type latencyRecorder struct {
	h        *hdrhistogram.Histogram
	count    uint64
	sum      float64
	min, max int64
	// previous arrival
	have     bool
	lastSeq  uint64
	lastD    int64
	ipdvN    uint64
	ipdvSum  float64
	ipdvMax  int64
	jitter   float64
	clamped  uint64 // negative latencies recorded as zero
	overflow uint64 // latencies above the histogram range
}

func newLatencyRecorder() *latencyRecorder {
	return &latencyRecorder{h: hdrhistogram.New(1, histMaxNs, histDigits)}
}

func (r *latencyRecorder) reset() {
	h := r.h
	h.Reset()
	*r = latencyRecorder{h: h}
}

// record adds the latency d (ns) of frame seq. It does not allocate.
func (r *latencyRecorder) record(seq uint64, d int64) {
	if d < 0 {
		r.clamped++
		d = 0
	}
	if r.count == 0 || d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
	r.count++
	r.sum += float64(d)
	if r.h.RecordValue(max(d, 1)) != nil {
		r.overflow++
		_ = r.h.RecordValue(histMaxNs)
	}
	if r.have {
		diff := d - r.lastD
		abs := diff
		if abs < 0 {
			abs = -abs
		}
		// RFC 3550 §6.4.1 over consecutive arrivals.
		r.jitter += (float64(abs) - r.jitter) / 16
		// RFC 5481 IPDV over consecutive sequence numbers.
		if seq == r.lastSeq+1 {
			r.ipdvN++
			r.ipdvSum += float64(abs)
			r.ipdvMax = max(r.ipdvMax, abs)
		}
	}
	r.have, r.lastSeq, r.lastD = true, seq, d
}

// summary renders the recorder as a LatencySummary, with its histogram
// (HDR) and CDF (Buckets).
func (r *latencyRecorder) summary() LatencySummary {
	s := r.stats()
	if r.count == 0 {
		return s
	}
	if b, err := r.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		s.HDR = string(b)
	}
	var last uint64
	for _, b := range r.h.CumulativeDistribution() {
		c := uint64(b.Count)
		if c == last || c == 0 {
			continue
		}
		last = c
		s.Buckets = append(s.Buckets, LatencyBucket{UpToNs: min(max(b.ValueAt, r.min), r.max), Cumulative: c})
	}
	return s
}

// stats is summary without the histogram and the CDF.
func (r *latencyRecorder) stats() LatencySummary {
	if r.count == 0 {
		return LatencySummary{}
	}
	q := func(p float64) int64 {
		return min(max(r.h.ValueAtQuantile(p), r.min), r.max)
	}
	s := LatencySummary{
		Count:        r.count,
		MinNs:        r.min,
		MeanNs:       r.sum / float64(r.count),
		MaxNs:        r.max,
		P50Ns:        q(50),
		P90Ns:        q(90),
		P99Ns:        q(99),
		P999Ns:       q(99.9),
		IPDVMaxAbsNs: r.ipdvMax,
		JitterNs:     math.Round(r.jitter*10) / 10,
	}
	s.PDVP999Ns = s.P999Ns - s.MinNs
	if r.ipdvN > 0 {
		s.IPDVMeanAbsNs = r.ipdvSum / float64(r.ipdvN)
	}
	return s
}
