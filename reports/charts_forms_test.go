package reports

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// inkRows says, per pixel row of img, whether it holds anything but white.
func inkRows(img image.Image) []bool {
	b := img.Bounds()
	rows := make([]bool, b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf800 || g < 0xf800 || bl < 0xf800 {
				rows[y-b.Min.Y] = true
				break
			}
		}
	}
	return rows
}

// TestPNGTitleGap: every chart's title has white above it and a gap under
// it before the plot (the top tick label touched the title), and no wide
// band either (gonum's log axis reserved room for its centred label near
// the top of the range and pushed the log loss chart 50 pixels down).
func TestPNGTitleGap(t *testing.T) {
	res := loadFixture(t, fixture1500)
	kinds := AvailableCharts(res)
	if len(kinds) != len(Charts) {
		t.Fatalf("fixture has charts %v, want all of %v", kinds, Charts)
	}
	for _, kind := range kinds {
		var b bytes.Buffer
		if err := WriteChart(&b, res, kind, PNG); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		rows := inkRows(img)
		top := 0
		for top < len(rows) && !rows[top] {
			top++
		}
		end := top
		for end < len(rows) && rows[end] {
			end++
		}
		next := end
		for next < len(rows) && !rows[next] {
			next++
		}
		title, gap := end-top, next-end
		t.Logf("%s: %d px above the title, title %d px, gap %d px", kind, top, title, gap)
		if top < 4 {
			t.Errorf("%s: the title starts %d px from the top edge, want ≥ 4", kind, top)
		}
		if title < 10 || title > 25 {
			t.Errorf("%s: the title's band is %d px high: the title is not alone on its rows", kind, title)
		}
		if gap < 8 || gap > 30 {
			t.Errorf("%s: %d px between the title and the plot, want 8 to 30", kind, gap)
		}
	}
}

// near reports whether a glyph box of p sits at (x, y) in data coordinates.
func near(p *plot.Plot, x, y float64) bool {
	nx, ny := p.X.Norm(x), p.Y.Norm(y)
	for _, g := range p.GlyphBoxes(p) {
		if math.Abs(g.X-nx) < 1e-6 && math.Abs(g.Y-ny) < 1e-6 {
			return true
		}
	}
	return false
}

// TestThroughputPercentChart: every measured size is marked at its
// throughput over its own line rate (the result's line_rate_fps), and the
// line rate is the 100 % line.
func TestThroughputPercentChart(t *testing.T) {
	res := loadFixture(t, fixture1500)
	p, err := ThroughputPercentChart(res)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Throughput {
		if !r.Found {
			continue
		}
		pct := r.FPS / r.LineRateFPS * 100
		if !near(p, float64(r.FrameSize), pct) {
			t.Errorf("%d B: no marker at %.2f %% of line rate", r.FrameSize, pct)
		}
		n++
	}
	if n == 0 {
		t.Fatal("fixture has no throughput found")
	}
	if p.Y.Max < 100 || p.Y.Max > 110 {
		t.Errorf("y axis up to %g %%, want just above the 100 %% line", p.Y.Max)
	}
	if !strings.Contains(p.Y.Label.Text, "% of line rate") {
		t.Errorf("y label %q does not say %% of line rate", p.Y.Label.Text)
	}
}

// TestFrameLossLogChart: the log axis starts a decade below the smallest
// loss, no-loss trials sit on that floor, labelled 0, lossy ones at their
// loss; results without loss have no log chart.
func TestFrameLossLogChart(t *testing.T) {
	res := loadFixture(t, fixture1500)
	p, err := FrameLossLogChart(res)
	if err != nil {
		t.Fatal(err)
	}
	minLoss := math.Inf(1)
	for _, r := range res.FrameLoss {
		for _, pt := range r.Points {
			if pt.LossPercent > 0 {
				minLoss = math.Min(minLoss, pt.LossPercent)
			}
		}
	}
	floor := math.Pow(10, p.Y.Min)
	if !(floor*10 <= minLoss && minLoss < floor*100) {
		t.Errorf("log axis floor %g %% for a smallest loss of %g %%: want a decade below it", floor, minLoss)
	}
	ticks := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	if ticks[0].Label != "0" || math.Abs(ticks[0].Value-p.Y.Min) > 1e-9 {
		t.Errorf("lowest tick %+v, want 0 at the floor %g", ticks[0], p.Y.Min)
	}
	zeros, lossy := 0, 0
	for _, r := range res.FrameLoss {
		for _, pt := range r.Points {
			y := p.Y.Min
			if pt.LossPercent > 0 {
				y, lossy = math.Log10(pt.LossPercent), lossy+1
			} else {
				zeros++
			}
			if !near(p, pt.OfferedPercent, y) {
				t.Errorf("%d B at %g %%: loss %g %% not drawn at %g", r.FrameSize, pt.OfferedPercent, pt.LossPercent, math.Pow(10, y))
			}
		}
	}
	if zeros == 0 || lossy == 0 {
		t.Fatalf("fixture has %d trials without and %d with loss, want both", zeros, lossy)
	}

	clean := *res
	clean.FrameLoss = nil
	for _, r := range res.FrameLoss {
		r.Points = append([]rfc2544.FrameLossPoint(nil), r.Points...)
		for i := range r.Points {
			r.Points[i].LossPercent = 0
		}
		clean.FrameLoss = append(clean.FrameLoss, r)
	}
	if _, err := FrameLossLogChart(&clean); err == nil || !strings.Contains(err.Error(), "no frame loss above zero") {
		t.Errorf("log chart of loss-free results: err %v, want 'no frame loss above zero'", err)
	}
	for _, k := range AvailableCharts(&clean) {
		if k == ChartFrameLossLog {
			t.Errorf("AvailableCharts of loss-free results lists %s", k)
		}
	}
}

// TestLatencyPercentileChart: the axis reads 0, 50, 90, 99, 99.9, 99.99 at
// 1/(1−p), and each bucket's latency holds from the previous bucket's
// percentile to its own.
func TestLatencyPercentileChart(t *testing.T) {
	var got []string
	for _, tk := range (percentileTicks{}).Ticks(1, 1e4) {
		if tk.Label != "" {
			got = append(got, tk.Label+"@"+human(tk.Value))
		}
	}
	want := []string{"0@1", "50@2", "90@10", "99@100", "99.9@1k", "99.99@10k"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("percentile ticks (-want +got):\n%s", diff)
	}

	// 1000 frames: 500 at ≤ 10 µs, 400 more at ≤ 20, 99 at ≤ 50, the
	// last at 400.
	dist := []distPoint{{10, 0.5}, {20, 0.9}, {50, 0.999}, {400, 1}}
	lg := math.Log10
	wantXY := plotter.XYs{
		{X: 0, Y: 1}, {X: lg(2), Y: 1}, // 0–50 %: 10 µs
		{X: lg(2), Y: lg(20)}, {X: 1, Y: lg(20)}, // 50–90 %: 20 µs
		{X: 1, Y: lg(50)}, {X: 3, Y: lg(50)}, // 90–99.9 %: 50 µs
		{X: 3, Y: lg(400)}, {X: 3, Y: lg(400)}, // the last frame of 1000 sits at 99.9 %
	}
	if diff := cmp.Diff(wantXY, percentileSteps(dist, 1000), cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("percentile steps (-want +got):\n%s", diff)
	}

	res := loadFixture(t, fixture1500)
	p, err := LatencyPercentileChart(res)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != 0 || p.X.Max < 2 {
		t.Errorf("percentile axis %g to %g (log10 of 1/(1−p)), want from 0 (the 0th percentile) over decades", p.X.Min, p.X.Max)
	}
}

// TestTickLabelsRound: tick labels of a small range are short decimals
// (the demo's loss axis read 0.15000000000000002 and 0.30000000000000004).
func TestTickLabelsRound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ticker   plot.Ticker
		min, max float64
	}{
		{"linear 0 to 0.22", humanTicks{}, 0, 0.2255},
		{"linear 0 to 0.011", humanTicks{}, 0, 0.011},
		{"log 0.01 to 0.31", logTicks{}, 0.01, 0.31},
		{"log 0.001 to 0.7", logTicks{}, 0.001, 0.7},
	} {
		for _, tk := range tc.ticker.Ticks(tc.min, tc.max) {
			if len(tk.Label) > 6 {
				t.Errorf("%s: tick at %v labelled %q", tc.name, tk.Value, tk.Label)
			}
		}
	}
}

// TestSVGFontFallback: SVG text falls back to the fonts that share
// Liberation Sans's metrics, in a file and inline in HTML.
func TestSVGFontFallback(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var svg, html bytes.Buffer
	if err := WriteChart(&svg, res, ChartThroughput, SVG); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, res); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"svg": svg.String(), "html": html.String()} {
		if strings.Contains(s, "font-family:Liberation Sans;") || !strings.Contains(s, svgFonts) {
			t.Errorf("%s: chart text without the fallback fonts %q", name, svgFonts)
		}
	}
}

// TestFrameLossTesterLimited: a sweep whose top steps the tester could not
// offer (the lab demo's 64 B: 100, 80, 60 % intended, 45.6, 46.9, 47.6 %
// offered) is drawn in order of offered load, not zigzagging back, and
// those points are marked tester-limited.
func TestFrameLossTesterLimited(t *testing.T) {
	res := &rfc2544.Results{Plan: rfc2544.Plan{LinkBps: 1e9}, FrameLoss: []rfc2544.FrameLossResult{{FrameSize: 64, Points: []rfc2544.FrameLossPoint{
		{IntendedPercent: 100, OfferedPercent: 45.59, LossPercent: 0.032, TesterLimited: true},
		{IntendedPercent: 80, OfferedPercent: 46.88, LossPercent: 0.228, TesterLimited: true},
		{IntendedPercent: 60, OfferedPercent: 47.59, LossPercent: 0.026, TesterLimited: true},
		{IntendedPercent: 40, OfferedPercent: 40, LossPercent: 0},
		{IntendedPercent: 20, OfferedPercent: 20, LossPercent: 0},
	}}}}
	xys, lim := lossPoints(res.FrameLoss[0], false, 0)
	var xs []float64
	for _, xy := range xys {
		xs = append(xs, xy.X)
	}
	if want := []float64{20, 40, 45.59, 46.88, 47.59}; !cmp.Equal(xs, want) {
		t.Errorf("loss points at offered %v, want %v", xs, want)
	}
	if len(lim) != 3 {
		t.Errorf("%d tester-limited points marked, want 3", len(lim))
	}
	for _, kind := range []ChartKind{ChartFrameLoss, ChartFrameLossLog} {
		p, err := Chart(res, kind)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WritePlot(&b, p, SVG); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "tester-limited: offered &lt; intended") {
			t.Errorf("%s: no tester-limited legend entry", kind)
		}
	}
}
