package reports

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// distPoint is one bucket of a latency distribution: its upper value (µs)
// and the share of frames (0 to 1) at or below it.
type distPoint struct{ us, share float64 }

// latencyDist is the latency distribution of one frame size from its
// histogram buckets, nil when the size was skipped or has none. The
// shares are of the last bucket's count, every frame the histogram saw
// (a sampled histogram, SimDUT's, does not reach Count).
func latencyDist(r rfc2544.LatencyResult) []distPoint {
	s := r.Summary
	if r.Skipped != "" || s.Count == 0 || len(s.Buckets) == 0 {
		return nil
	}
	total := float64(s.Buckets[len(s.Buckets)-1].Cumulative)
	if total <= 0 {
		return nil
	}
	var out []distPoint
	for _, b := range s.Buckets {
		if b.UpToNs > 0 {
			out = append(out, distPoint{us: float64(b.UpToNs) / 1e3, share: float64(b.Cumulative) / total})
		}
	}
	return out
}

// cdfDashes tell the distribution curves apart beside their colours.
var cdfDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}

// percentileX is where the share p (0 to 1) of n frames sits on a
// percentile axis: 1/(1−p), so 50 % is 2, 90 % is 10, 99 % is 100; the
// last frame, p = 1, sits at n (the percentile 1 − 1/n it stands for).
func percentileX(p, n float64) float64 {
	return 1 / math.Max(1-p, 1/n)
}

// percentileSteps is the step curve of dist (of total frames) on a
// percentile chart, in log10 coordinates: every percentile from the
// previous bucket's share up to this bucket's has this bucket's latency.
func percentileSteps(dist []distPoint, total float64) plotter.XYs {
	var xys plotter.XYs
	prev := 1.0
	for _, d := range dist {
		x := percentileX(d.share, total)
		xys = append(xys, plotter.XY{X: math.Log10(prev), Y: math.Log10(d.us)}, plotter.XY{X: math.Log10(x), Y: math.Log10(d.us)})
		prev = x
	}
	return xys
}

// LatencyPercentileChart plots latency (µs, log scale) against percentile
// at the throughput rate, one step curve per frame size, the percentile on
// a log axis of 1/(1−p) labelled 0, 50, 90, 99, 99.9 … %: the HdrHistogram
// percentile plot, where a tail of one frame in ten thousand is as wide as
// the body.
func LatencyPercentileChart(res *rfc2544.Results) (*plot.Plot, error) {
	p := newPlot("Latency by percentile at the throughput rate", "Percentile (%, log scale of 1/(1 − p))", "Latency (µs, log scale)")
	ylo, yhi, xhi := math.Inf(1), 0.0, 100.0
	n := 0
	for i, r := range res.Latency {
		dist := latencyDist(r)
		if len(dist) == 0 {
			continue
		}
		total := float64(r.Summary.Buckets[len(r.Summary.Buckets)-1].Cumulative)
		xys := percentileSteps(dist, total)
		ylo, yhi = math.Min(ylo, dist[0].us), math.Max(yhi, dist[len(dist)-1].us)
		xhi = math.Max(xhi, math.Pow(10, xys[len(xys)-1].X))
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("latency percentile chart: %w", err)
		}
		l.Color, l.Width = colorOf(i), vg.Points(1.5)
		l.Dashes = cdfDashes[i%len(cdfDashes)]
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%d B", r.FrameSize), l)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("results hold no latency distribution: the latency test did not run or recorded no histogram buckets")
	}
	logAxis(&p.X, 1, math.Pow(10, math.Ceil(math.Log10(xhi)-1e-9)), percentileTicks{})
	logAxis(&p.Y, ylo/1.2, yhi*1.2, logTicks{})
	return p, nil
}

// percentileTicks label a 1/(1−p) axis in percent: 0 at 1, 50 at 2, and
// 90, 99, 99.9 … at every power of ten.
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	ticks := []plot.Tick{}
	if min <= 1 && max >= 2 {
		ticks = append(ticks, plot.Tick{Value: 1, Label: "0"}, plot.Tick{Value: 2, Label: "50"})
	}
	for k := 1; k <= 12; k++ {
		v := math.Pow(10, float64(k))
		if v < min || v > max {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: percentileLabel(k)})
		if v*5 <= max { // 99.8 % and its like: a tick without a label
			ticks = append(ticks, plot.Tick{Value: v * 5})
		}
	}
	return ticks
}

// percentileLabel is 1 − 10^−k in percent: 90, 99, 99.9, 99.99 …
func percentileLabel(k int) string {
	switch k {
	case 1:
		return "90"
	case 2:
		return "99"
	}
	return "99." + strings.Repeat("9", k-2)
}

// floorTicks are logTicks whose tick at floor, the bottom of a log axis
// where zeros are drawn, is labelled 0.
type floorTicks struct{ floor float64 }

func (f floorTicks) Ticks(min, max float64) []plot.Tick {
	ticks := logTicks{}.Ticks(min, max)
	for i := range ticks {
		if math.Abs(ticks[i].Value/f.floor-1) < 1e-9 {
			ticks[i].Label = "0"
		}
	}
	return ticks
}

// logAxis makes a a log axis over [min, max] (both above zero) with ticks
// from t, drawn as a linear axis of log10 values: data on it goes through
// math.Log10. gonum's LogScale reserves room for a centred axis label
// around the arithmetic middle of the range, 0.5·(min+max), which on a
// range of decades lies near one end: a long label then pushed the plot
// 50 pixels under the title of the log loss chart.
func logAxis(a *plot.Axis, min, max float64, t plot.Ticker) {
	a.Scale = plot.LinearScale{}
	a.Min, a.Max = math.Log10(min), math.Log10(max)
	a.Tick.Marker = log10Ticks{t}
}

// log10Ticks are the ticks of a log axis at their log10 positions.
type log10Ticks struct{ ticks plot.Ticker }

func (l log10Ticks) Ticks(min, max float64) []plot.Tick {
	// A hair wider, so a tick at an end that is a power of ten (the
	// loss chart's floor) survives the round trip through Log10.
	ticks := l.ticks.Ticks(math.Pow(10, min-1e-12), math.Pow(10, max+1e-12))
	for i := range ticks {
		ticks[i].Value = math.Log10(ticks[i].Value)
	}
	return ticks
}
