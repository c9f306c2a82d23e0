package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// LatencyDefinition is how latency is measured: the engine writes the
// transmit time into the frame as it hands it to the kernel and the receive
// time is the kernel's receive timestamp, so the figure approximates
// RFC 1242's FIFO (first bit in, first bit out) latency plus the tester's
// own send and receive paths.
const LatencyDefinition = "FIFO-approx (transmit stamp to receive timestamp)"

// Latency measures latency at one frame size (RFC 2544 §26.2): Repetitions
// streams of latency.duration at the throughput rate, each with a tagged
// frame sent half way; the result is the mean of the tagged frames'
// latencies, plus all-frame statistics (min, mean, max, percentiles, PDV and
// IPDV per RFC 5481) over every repetition. A size without a throughput is
// skipped with the reason. When the throughput is tester-limited the streams
// run at the load the tester did offer.
func (r *Runner) Latency(ctx context.Context, frameSize int, tput ThroughputResult) (LatencyResult, error) {
	p, err := r.prepare()
	if err != nil {
		return LatencyResult{FrameSize: frameSize}, err
	}
	return r.latency(ctx, p, frameSize, tput)
}

func (r *Runner) latency(ctx context.Context, p Plan, size int, tput ThroughputResult) (LatencyResult, error) {
	out := LatencyResult{FrameSize: size, Definition: LatencyDefinition}
	if !tput.Found {
		out.Skipped = fmt.Sprintf("no throughput at %d bytes to measure latency at: %s", size, tput.Reason)
		return out, nil
	}
	if tput.NotSustained != "" {
		// Latency at a load the DUT's queue absorbed measures the queue.
		if !p.Throughput.AllowBuffering {
			out.Skipped = fmt.Sprintf("the throughput trial at %d bytes was not sustained (%s): latency there would measure a growing queue", size, tput.NotSustained)
			return out, nil
		}
		out.Note = "measured at a load whose throughput trial was not sustained (--allow-buffering): " + tput.NotSustained
	}
	if tput.TesterLimited {
		out.Note = joinNote(out.Note, "measured at the highest load the tester carried cleanly (the throughput is tester-limited above it)")
	}
	lr := framing.LineRateFPS(p.LinkBps, size)
	pct := tputPercent(tput)
	fps := pct / 100 * lr
	out.RatePercent = pct
	out.RateFPS = fps * float64(p.Streams())
	var sums []trials.LatencySummary
	var tagged float64
	for rep := 1; rep <= p.Latency.Repetitions; rep++ {
		spec := p.spec(size, fps)
		spec.Duration = p.Latency.Duration.D()
		spec.TagAfter = spec.Duration / 2
		rec, err := r.trial(ctx, p, trialReq{
			test: TestLatency, size: size, step: rep, rep: rep, intendedPercent: pct,
			tolerance: p.Throughput.LossTolerancePercent, spec: spec,
		})
		if err != nil {
			out.Incomplete = true
			return out, err
		}
		if out.Repetitions == 0 && rec.Result.Paths.Timestamps != "" {
			out.Definition = fmt.Sprintf("%s, %s timestamps", LatencyDefinition, rec.Result.Paths.Timestamps)
			switch rec.Result.Paths.Latency {
			case "round-trip":
				out.Definition += ", round trip (frames reflected by the remote agent)"
			case "one-way":
				out.Definition += ", one way across hosts (clocks declared synchronized)"
			}
		}
		out.Trials = append(out.Trials, rec)
		out.Repetitions++
		for _, s := range rec.Result.Streams {
			sums = append(sums, s.Latency)
		}
		if t := rec.Result.Totals().TaggedLatencyNs; t >= 0 {
			out.TaggedNs = append(out.TaggedNs, t)
			tagged += float64(t)
		} else {
			out.LostTagged++
		}
	}
	if len(out.TaggedNs) > 0 {
		out.TaggedMeanNs = tagged / float64(len(out.TaggedNs))
	}
	out.Summary = MergeLatency(sums)
	var results []trials.Result
	for _, rec := range out.Trials {
		results = append(results, rec.Result)
	}
	out.Sizes = sizeLatencies(results)
	return out, nil
}

// tputPercent is the per-stream load, in percent of line rate, that the
// procedures run "at the throughput": the passing trial's intended load, or
// the load the tester did offer when the throughput is tester-limited.
func tputPercent(t ThroughputResult) float64 {
	if t.TesterLimited {
		return t.OfferedPercent
	}
	return t.IntendedPercent
}

// MergeLatency combines latency summaries of several streams or trials.
// Count, min, max and the count-weighted means (latency, |IPDV|, jitter)
// are exact, the IPDV maximum is the largest. When every non-empty summary
// carries its histogram (HDR), the histograms are merged with
// hdrhistogram's Merge and the percentiles and the CDF buckets (at full
// resolution) are read from the merged one; otherwise the percentiles come
// from the merged cumulative buckets, or, without buckets, are the largest
// of any summary (an upper bound). Either way PDV P99.9 = P99.9 − min.
func MergeLatency(ls []trials.LatencySummary) trials.LatencySummary {
	var out trials.LatencySummary
	var nonEmpty []trials.LatencySummary
	for _, l := range ls {
		if l.Count > 0 {
			nonEmpty = append(nonEmpty, l)
		}
	}
	if len(nonEmpty) == 0 {
		return out
	}
	var mean, ipdv, jit float64
	buckets := true
	for i, l := range nonEmpty {
		if i == 0 || l.MinNs < out.MinNs {
			out.MinNs = l.MinNs
		}
		out.MaxNs = max(out.MaxNs, l.MaxNs)
		out.Count += l.Count
		w := float64(l.Count)
		mean += l.MeanNs * w
		ipdv += l.IPDVMeanAbsNs * w
		jit += l.JitterNs * w
		out.P50Ns = max(out.P50Ns, l.P50Ns)
		out.P90Ns = max(out.P90Ns, l.P90Ns)
		out.P99Ns = max(out.P99Ns, l.P99Ns)
		out.P999Ns = max(out.P999Ns, l.P999Ns)
		out.IPDVMaxAbsNs = max(out.IPDVMaxAbsNs, l.IPDVMaxAbsNs)
		if len(l.Buckets) == 0 {
			buckets = false
		}
	}
	c := float64(out.Count)
	out.MeanNs, out.IPDVMeanAbsNs, out.JitterNs = mean/c, ipdv/c, jit/c
	if len(nonEmpty) == 1 {
		// One summary: its own figures (IPDV and jitter are not
		// averages of anything), its CDF at full resolution.
		out = nonEmpty[0]
		out.Buckets = slices.Clone(out.Buckets)
	}
	if h := mergeHists(nonEmpty); h != nil {
		histStats(&out, h, true, true)
		return out
	}
	if buckets && len(nonEmpty) > 1 {
		out.Buckets = mergeBuckets(nonEmpty)
		q := func(f float64) int64 {
			v := bucketQuantile(out.Buckets, f)
			return min(max(v, out.MinNs), out.MaxNs)
		}
		out.P50Ns, out.P90Ns, out.P99Ns, out.P999Ns = q(0.5), q(0.9), q(0.99), q(0.999)
	}
	out.PDVP999Ns = out.P999Ns - out.MinNs
	return out
}

// mergeHists is the merge of the histograms of ls, or nil when one lacks
// its histogram or it does not decode.
func mergeHists(ls []trials.LatencySummary) *hdrhistogram.Histogram {
	merged := newHist()
	for _, l := range ls {
		if l.HDR == "" {
			return nil
		}
		h, err := decodeHist(l.HDR)
		if err != nil {
			return nil
		}
		if merged.Merge(h) != 0 {
			return nil
		}
	}
	return merged
}

// mergeBuckets adds cumulative distributions: at every bound of any input,
// the sum over inputs of the count at or below it.
func mergeBuckets(ls []trials.LatencySummary) []trials.LatencyBucket {
	var bounds []int64
	for _, l := range ls {
		for _, b := range l.Buckets {
			bounds = append(bounds, b.UpToNs)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	out := make([]trials.LatencyBucket, len(bounds))
	idx := make([]int, len(ls)) // next bucket of each input not yet at or below the bound
	for i, b := range bounds {
		var cum uint64
		for j, l := range ls {
			for idx[j] < len(l.Buckets) && l.Buckets[idx[j]].UpToNs <= b {
				idx[j]++
			}
			if idx[j] > 0 {
				cum += l.Buckets[idx[j]-1].Cumulative
			}
		}
		out[i] = trials.LatencyBucket{UpToNs: b, Cumulative: cum}
	}
	return out
}

// bucketQuantile is the smallest bucket bound with at least a fraction f of
// the distribution at or below it.
func bucketQuantile(bs []trials.LatencyBucket, f float64) int64 {
	if len(bs) == 0 {
		return 0
	}
	total := bs[len(bs)-1].Cumulative
	want := uint64(math.Ceil(f * float64(total)))
	for _, b := range bs {
		if b.Cumulative >= want {
			return b.UpToNs
		}
	}
	return bs[len(bs)-1].UpToNs
}
