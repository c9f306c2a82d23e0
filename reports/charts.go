package reports

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// ChartKind names one chart of a results file.
type ChartKind string

// The charts of a results file, in report order.
const (
	// ChartThroughput is throughput (frames/s) vs frame size with the
	// theoretical line-rate curve (RFC 2544 §26.1's graph).
	ChartThroughput ChartKind = "throughput"
	// ChartLatency is latency (µs: min, mean, P99, max) vs frame size.
	ChartLatency ChartKind = "latency"
	// ChartFrameLoss is frame loss (%) vs offered load (% of line rate), one
	// curve per frame size (RFC 2544 §26.3's graph).
	ChartFrameLoss ChartKind = "frame_loss"
	// ChartLatencyCDF is the cumulative latency distribution at the
	// throughput rate, one curve per frame size.
	ChartLatencyCDF ChartKind = "latency_cdf"
	// ChartLatencyPercentile is the same distribution as latency against
	// percentile, the percentile on a log axis of 1/(1−p) (50, 90, 99,
	// 99.9 … %): the tail the CDF squeezes into its top pixels spreads
	// over decades.
	ChartLatencyPercentile ChartKind = "latency_percentile"
	// ChartThroughputPercent is ChartThroughput in % of each size's
	// theoretical line rate: the line is 100 % at every size, so a
	// shortfall at 1518 bytes reads as plainly as one at 64.
	ChartThroughputPercent ChartKind = "throughput_percent"
	// ChartFrameLossLog is ChartFrameLoss on a log axis, where 0.001 % and
	// 10 % loss both read; no loss is drawn on the axis' floor, labelled 0.
	// Results without any loss have no such chart.
	ChartFrameLossLog ChartKind = "frame_loss_log"
)

// Charts lists every chart kind in report order: the four of the RFC's
// graphs and the CDF, then the other forms of the same data.
var Charts = []ChartKind{ChartThroughput, ChartLatency, ChartFrameLoss, ChartLatencyCDF,
	ChartLatencyPercentile, ChartThroughputPercent, ChartFrameLossLog}

// ParseChartKind reads a chart name; '-' is accepted for '_'.
func ParseChartKind(s string) (ChartKind, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	for _, k := range Charts {
		if string(k) == n {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown chart %q: want one of %s", s, joinNames(Charts))
}

// ImageFormat is a chart's file format.
type ImageFormat string

// Chart file formats.
const (
	SVG ImageFormat = "svg"
	PNG ImageFormat = "png"
)

// ParseImageFormat reads "svg" or "png" (a leading dot is accepted).
func ParseImageFormat(s string) (ImageFormat, error) {
	switch f := ImageFormat(strings.TrimPrefix(strings.ToLower(s), ".")); f {
	case SVG, PNG:
		return f, nil
	}
	return "", fmt.Errorf("unknown image format %q: want svg or png", s)
}

// ChartWidth and ChartHeight are the size every chart is drawn at; a PNG is
// rendered at 96 dots per inch (768 × 480 pixels).
const (
	ChartWidth  = 8 * vg.Inch
	ChartHeight = 5 * vg.Inch
)

// WriteChart draws one chart of res in format. It is an error to ask for a
// chart the results hold no data for.
func WriteChart(w io.Writer, res *rfc2544.Results, kind ChartKind, format ImageFormat) error {
	p, err := Chart(res, kind)
	if err != nil {
		return err
	}
	return WritePlot(w, p, format)
}

// Chart builds one chart of res as a gonum plot, for callers who want to
// restyle or resize it before writing it with WritePlot.
func Chart(res *rfc2544.Results, kind ChartKind) (*plot.Plot, error) {
	switch kind {
	case ChartThroughput:
		return ThroughputChart(res)
	case ChartLatency:
		return LatencyChart(res)
	case ChartFrameLoss:
		return FrameLossChart(res)
	case ChartLatencyCDF:
		return LatencyCDFChart(res)
	case ChartLatencyPercentile:
		return LatencyPercentileChart(res)
	case ChartThroughputPercent:
		return ThroughputPercentChart(res)
	case ChartFrameLossLog:
		return FrameLossLogChart(res)
	}
	return nil, fmt.Errorf("unknown chart %q: want one of %s", kind, joinNames(Charts))
}

// AvailableCharts lists the charts res holds data for.
func AvailableCharts(res *rfc2544.Results) []ChartKind {
	var out []ChartKind
	for _, k := range Charts {
		if _, err := Chart(res, k); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// WritePlot writes p at ChartWidth × ChartHeight in format, its legend
// under the chart (never over the data).
func WritePlot(w io.Writer, p *plot.Plot, format ImageFormat) error {
	if _, err := ParseImageFormat(string(format)); err != nil {
		return err
	}
	c, err := draw.NewFormattedCanvas(ChartWidth, ChartHeight, string(format))
	if err != nil {
		return fmt.Errorf("render %s chart: %w", format, err)
	}
	drawOutsideLegend(draw.New(c), p)
	if format == SVG {
		// Text is laid out with Liberation Sans's metrics; a viewer
		// without it falls back to Arial or Helvetica, which share them,
		// rather than to a wider default (DejaVu Sans ran the 1280 and
		// 1518 tick labels into one).
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("render svg chart: %w", err)
		}
		_, err := io.WriteString(w, strings.ReplaceAll(b.String(), "font-family:Liberation Sans;", svgFonts))
		if err != nil {
			return fmt.Errorf("write svg chart: %w", err)
		}
		return nil
	}
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write %s chart: %w", format, err)
	}
	return nil
}

// svgFonts is the font-family of an SVG chart's text: Liberation Sans and
// the fonts metric-compatible with it.
const svgFonts = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// titleMargin is the blank band above a chart's title, titleGap the one
// between the title and the plot (the top tick label, "100", touched the
// title without it).
var titleMargin, titleGap = vg.Points(6), vg.Points(10)

// drawOutsideLegend draws p on dc with its legend in a band under it.
func drawOutsideLegend(dc draw.Canvas, p *plot.Plot) {
	dc = draw.Crop(dc, 0, 0, 0, -titleMargin)
	leg := p.Legend
	r := leg.Rectangle(dc)
	height := r.Max.Y - r.Min.Y
	if height <= 0 { // no entries
		p.Draw(dc)
		return
	}
	pad := vg.Points(6)
	band := height + 2*pad
	p.Legend = plot.NewLegend()
	p.Draw(draw.Crop(dc, 0, 0, band, 0))
	p.Legend = leg
	lc := draw.Crop(dc, vg.Points(48), 0, 0, -(dc.Max.Y - dc.Min.Y - band + pad))
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	leg.Draw(lc)
}

// palette is ten distinguishable colours (Tableau 10), one per series.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
}

func colorOf(i int) color.Color { return palette[i%len(palette)] }

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot makes a plot with a title, labelled axes, a grid and sans-serif
// text throughout.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font = font.From(sansFont, 14)
	p.Title.Padding = titleGap
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, 12)
		a.Tick.Label.Font = font.From(sansFont, 10)
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 10)
	p.Add(plotter.NewGrid())
	return p
}

// frameSizeAxis puts frame sizes on a log axis. With sizes (the measured
// ones) every size is a labelled tick, but for one within a fifth of an
// octave of a larger one; without, 1518, the largest size and the powers
// of two not too close to those are.
func frameSizeAxis(a *plot.Axis, minSize, maxSize float64, sizes ...float64) {
	a.Scale = plot.LogScale{}
	a.Min, a.Max = minSize/1.15, maxSize*1.15
	labelled := []float64{maxSize}
	if len(sizes) > 0 {
		sizes = slices.Clone(sizes)
		slices.Sort(sizes)
		for i := len(sizes) - 1; i >= 0; i-- {
			if v := sizes[i]; math.Abs(math.Log2(labelled[len(labelled)-1]/v)) >= 0.22 {
				labelled = append(labelled, v)
			}
		}
	} else {
		if 1518 >= a.Min && 1518 <= a.Max && math.Abs(math.Log2(maxSize/1518)) > 0.35 {
			labelled = append(labelled, 1518)
		}
		for v := 32.0; v <= 16384; v *= 2 {
			if v < a.Min || v > a.Max {
				continue
			}
			near := false
			for _, l := range labelled {
				near = near || math.Abs(math.Log2(v/l)) < 0.35
			}
			if !near {
				labelled = append(labelled, v)
			}
		}
	}
	slices.Sort(labelled)
	labelled = slices.Compact(labelled)
	var ticks []plot.Tick
	for _, v := range labelled {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.Itoa(int(v))})
	}
	for _, v := range sizes {
		if !slices.Contains(labelled, v) {
			ticks = append(ticks, plot.Tick{Value: v}) // a tick without a label
		}
	}
	a.Tick.Marker = plot.ConstantTicks(ticks)
}

// humanTicks labels a linear axis at a round step, five to ten labels, with
// k and M suffixes (1.5M, not 1.5e+06).
type humanTicks struct{}

func (humanTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	raw := (max - min) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: human(math.Round(v/step) * step)})
		if half := v + step/2; half <= max {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// human labels v with k and M suffixes, rounded to 12 significant digits
// first: a tick computed as 3 × 0.05 or 3 × 0.1 is labelled 0.15 or 0.3,
// not 0.15000000000000002.
func human(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// logTicks labels a log axis at 1, 2 and 5 times every power of ten and at
// its lowest and highest tick, so a range inside one decade (20 to 37 µs)
// still reads at both ends; with no tick inside the range, its ends are
// ticks.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	if min <= 0 || max <= min {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = human(v)
			}
			ticks = append(ticks, t)
		}
	}
	if len(ticks) == 0 {
		return []plot.Tick{{Value: min, Label: human3(min)}, {Value: max, Label: human3(max)}}
	}
	// Label the end ticks; a label of an inner tick so near an end that
	// the two would collide (within 6 % of the axis) gives way.
	span := math.Log10(max / min)
	ends := []int{0, len(ticks) - 1}
	for _, i := range ends {
		ticks[i].Label = human(ticks[i].Value)
	}
	for j := 1; j < len(ticks)-1; j++ {
		for _, i := range ends {
			if math.Abs(math.Log10(ticks[j].Value/ticks[i].Value)) < 0.06*span {
				ticks[j].Label = ""
			}
		}
	}
	return ticks
}

// human3 is human with three significant digits.
func human3(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return human(r)
}

// markers is a scatter of xys in colour c with glyph.
func markers(xys plotter.XYs, c color.Color, glyph draw.GlyphDrawer) (*plotter.Scatter, error) {
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: glyph}
	return s, nil
}

func line(xys plotter.XYs, c color.Color, dashed bool, glyph draw.GlyphDrawer) (*plotter.Line, *plotter.Scatter, error) {
	l, s, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, nil, err
	}
	l.Color, l.Width = c, vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	s.Color = c
	s.GlyphStyle.Shape = glyph
	s.GlyphStyle.Radius = vg.Points(3)
	return l, s, nil
}

// ThroughputChart plots the measured throughput of every frame size
// (frames/s, all streams) against the theoretical line rate, with
// tester-limited sizes (lower bounds) and sizes with no throughput marked.
func ThroughputChart(res *rfc2544.Results) (*plot.Plot, error) {
	return throughputChart(res, false)
}

// ThroughputPercentChart is ThroughputChart with throughput in % of each
// frame size's theoretical line rate (all streams): the line rate is the
// 100 % line, the tester's calibrated ceiling and every marker are scaled
// by the same line rate.
func ThroughputPercentChart(res *rfc2544.Results) (*plot.Plot, error) {
	return throughputChart(res, true)
}

func throughputChart(res *rfc2544.Results, percent bool) (*plot.Plot, error) {
	if len(res.Throughput) == 0 {
		return nil, fmt.Errorf("results hold no throughput results: the run did not include that test")
	}
	ylabel := fmt.Sprintf("Throughput (frames/s, %d stream(s))", streams(res))
	if percent {
		ylabel = "Throughput (% of line rate at each size)"
	}
	p := newPlot("Throughput vs frame size (RFC 2544 §26.1)", "Frame size (bytes, FCS included)", ylabel)
	p.Y.Tick.Marker = humanTicks{}
	p.Y.Min = 0
	minSize, maxSize := sizeRange(res)
	var sizes []float64
	for _, r := range res.Throughput {
		sizes = append(sizes, framing.MeanFrameSize(r.FrameSize))
	}
	frameSizeAxis(&p.X, minSize, maxSize, sizes...)
	ymax, err := addThroughput(p, res, throughputStyle{theory: true, calibration: true, measured: true, percent: percent}, minSize, maxSize)
	if err != nil {
		return nil, err
	}
	p.Y.Max = ymax * 1.05
	return p, nil
}

// sizeRange is the smallest and largest frame size of res's throughput.
func sizeRange(res *rfc2544.Results) (float64, float64) {
	minSize, maxSize := math.Inf(1), 0.0
	for _, r := range res.Throughput {
		f := framing.MeanFrameSize(r.FrameSize)
		minSize, maxSize = math.Min(minSize, f), math.Max(maxSize, f)
	}
	return minSize, maxSize
}

// throughputStyle says how addThroughput draws one run.
type throughputStyle struct {
	name        string // prefixes legend entries when set
	color       int    // palette index of the measured curve
	dashes      []vg.Length
	glyph       draw.GlyphDrawer
	theory      bool // draw the theoretical line rate
	calibration bool // draw the tester's calibrated ceiling
	// measured draws the run's throughput; ThroughputChart always does,
	// a comparison draws the theoretical line on its own first.
	measured bool
	// percent draws every value in % of its size's theoretical line rate.
	percent bool
}

// addThroughput adds one run's throughput curves over [minSize, maxSize]
// and returns the highest value drawn.
func addThroughput(p *plot.Plot, res *rfc2544.Results, st throughputStyle, minSize, maxSize float64) (float64, error) {
	name, c := st.name, st.color
	// y is what the chart shows of fps frames/s at frame size f.
	y := func(f, fps float64) float64 {
		if !st.percent {
			return fps
		}
		line := framing.LineRateFPS(res.Plan.LinkBps, int(math.Round(f))) * float64(streams(res))
		if line <= 0 {
			return 0
		}
		return fps / line * 100
	}
	var found, limited, missing plotter.XYs
	for _, r := range res.Throughput {
		f := framing.MeanFrameSize(r.FrameSize)
		switch {
		case !r.Found:
			missing = append(missing, plotter.XY{X: f, Y: 0})
		case r.TesterLimited:
			limited = append(limited, plotter.XY{X: f, Y: y(f, r.FPS)})
			found = append(found, plotter.XY{X: f, Y: y(f, r.FPS)})
		default:
			found = append(found, plotter.XY{X: f, Y: y(f, r.FPS)})
		}
	}
	label := func(s string) string {
		if name == "" {
			return s
		}
		return name + ": " + s
	}
	// The theoretical curve, sampled densely between the smallest and the
	// largest size so it shows its 1/(F+20) shape.
	var theory plotter.XYs
	const n = 120
	for i := 0; i <= n; i++ {
		f := minSize * math.Pow(maxSize/minSize, float64(i)/n)
		theory = append(theory, plotter.XY{X: f, Y: y(f, framing.LineRateFPS(res.Plan.LinkBps, int(math.Round(f)))*float64(streams(res)))})
	}
	if st.theory {
		tl, err := plotter.NewLine(theory)
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		tl.Color, tl.Width, tl.Dashes = colorOf(c+1), vg.Points(1.5), []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(tl)
		p.Legend.Add(label("theoretical line rate ("+bitRate(res.Plan.LinkBps)+")"), tl)
	}
	if st.calibration && len(res.Tester.Calibration) > 0 {
		var cal plotter.XYs
		for _, cp := range res.Tester.Calibration {
			// The ceiling is per stream; the chart shows all streams.
			f := float64(cp.FrameSize)
			cal = append(cal, plotter.XY{X: f, Y: y(f, cp.CeilingFPS*float64(streams(res)))})
		}
		cl, cs, err := line(cal, color.Gray{Y: 110}, true, draw.PlusGlyph{})
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		cl.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(cl, cs)
		p.Legend.Add(label("tester ceiling (calibrated)"), cl, cs)
	}
	if !st.measured {
		found, limited, missing = nil, nil, nil
	}
	if len(found) > 0 {
		glyph := st.glyph
		if glyph == nil {
			glyph = draw.CircleGlyph{}
		}
		// Markers only: a line between measured sizes would claim
		// throughputs nobody measured (and cross the line-rate curve).
		s, err := markers(found, colorOf(c), glyph)
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		p.Add(s)
		lbl := "measured throughput"
		if hasGoals(res) {
			lbl = "NDR (throughput, first goal)"
		}
		p.Legend.Add(label(lbl), s)
	}
	if pdr := pdrPoints(res); st.measured && len(pdr) > 0 {
		for i := range pdr {
			pdr[i].Y = y(pdr[i].X, pdr[i].Y)
		}
		s, err := markers(pdr, colorOf(c), draw.RingGlyph{})
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		s.GlyphStyle.Radius = vg.Points(6) // a ring around the NDR marker when they coincide
		p.Add(s)
		p.Legend.Add(label("PDR (conditional throughput, loss goal > 0)"), s)
		found = append(found, pdr...) // for the y range
	}
	if len(limited) > 0 {
		s, err := plotter.NewScatter(limited)
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorOf(c), Radius: vg.Points(6), Shape: draw.TriangleGlyph{}}
		p.Add(s)
		p.Legend.Add(label("≥ tester-limited (lower bound)"), s)
	}
	if len(missing) > 0 {
		s, err := plotter.NewScatter(missing)
		if err != nil {
			return 0, fmt.Errorf("throughput chart: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{200, 0, 0, 255}, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
		p.Add(s)
		p.Legend.Add(label("no throughput (not found)"), s)
	}
	ymax := 0.0
	if !st.theory {
		theory = nil
	}
	for _, xys := range []plotter.XYs{theory, found} {
		for _, xy := range xys {
			ymax = math.Max(ymax, xy.Y)
		}
	}
	return ymax, nil
}

// LatencyChart plots latency (µs, log scale) against frame size: min, mean,
// P99 and max of every frame timed at the throughput rate.
func LatencyChart(res *rfc2544.Results) (*plot.Plot, error) {
	var mins, means, p99s, maxs plotter.XYs
	minSize, maxSize := math.Inf(1), 0.0
	for _, r := range res.Latency {
		s := r.Summary
		if r.Skipped != "" || s.Count == 0 || s.MinNs <= 0 {
			continue
		}
		f := framing.MeanFrameSize(r.FrameSize)
		minSize, maxSize = math.Min(minSize, f), math.Max(maxSize, f)
		mins = append(mins, plotter.XY{X: f, Y: float64(s.MinNs) / 1e3})
		means = append(means, plotter.XY{X: f, Y: s.MeanNs / 1e3})
		p99s = append(p99s, plotter.XY{X: f, Y: float64(s.P99Ns) / 1e3})
		maxs = append(maxs, plotter.XY{X: f, Y: float64(s.MaxNs) / 1e3})
	}
	if len(mins) == 0 {
		return nil, fmt.Errorf("results hold no latency measurements: the run did not include the latency test, or every size was skipped")
	}
	p := newPlot("Latency vs frame size at the throughput rate (RFC 2544 §26.2)", "Frame size (bytes, FCS included)", "Latency (µs, log scale)")
	var sizes []float64
	for _, xy := range mins {
		sizes = append(sizes, xy.X)
	}
	frameSizeAxis(&p.X, minSize, maxSize, sizes...)
	ylo, yhi := math.Inf(1), 0.0
	for _, xy := range mins {
		ylo = math.Min(ylo, xy.Y)
	}
	for _, xy := range maxs {
		yhi = math.Max(yhi, xy.Y)
	}
	logAxis(&p.Y, ylo/1.2, yhi*1.2, logTicks{})
	for _, xys := range []plotter.XYs{mins, means, p99s, maxs} {
		for i := range xys {
			xys[i].Y = math.Log10(xys[i].Y)
		}
	}
	for i, s := range []struct {
		name  string
		xys   plotter.XYs
		glyph draw.GlyphDrawer
	}{
		{"max", maxs, draw.TriangleGlyph{}},
		{"P99", p99s, draw.SquareGlyph{}},
		{"mean", means, draw.CircleGlyph{}},
		{"min", mins, draw.RingGlyph{}},
	} {
		l, sc, err := line(s.xys, colorOf(i), false, s.glyph)
		if err != nil {
			return nil, fmt.Errorf("latency chart: %w", err)
		}
		p.Add(l, sc)
		p.Legend.Add(s.name, l, sc)
	}
	return p, nil
}

// FrameLossChart plots frame loss (%) against offered load (% of line rate)
// for every frame size.
func FrameLossChart(res *rfc2544.Results) (*plot.Plot, error) {
	return frameLossChart(res, false)
}

// FrameLossLogChart is FrameLossChart on a log loss axis from a decade
// below the smallest loss measured; a trial without loss is drawn on that
// floor, whose label is 0. Results without any loss have no such chart.
func FrameLossLogChart(res *rfc2544.Results) (*plot.Plot, error) {
	return frameLossChart(res, true)
}

func frameLossChart(res *rfc2544.Results, logScale bool) (*plot.Plot, error) {
	if len(res.FrameLoss) == 0 {
		return nil, fmt.Errorf("results hold no frame loss results: the run did not include that test")
	}
	ymin, ymax := math.Inf(1), 0.0
	for _, r := range res.FrameLoss {
		for _, pt := range r.Points {
			ymax = math.Max(ymax, pt.LossPercent)
			if pt.LossPercent > 0 {
				ymin = math.Min(ymin, pt.LossPercent)
			}
		}
	}
	title, ylabel := "Frame loss rate vs offered load (RFC 2544 §26.3)", "Frame loss (%)"
	floor := 0.0
	if logScale {
		if ymax <= 0 {
			return nil, fmt.Errorf("results hold no frame loss above zero: a log axis has nothing to show (the frame_loss chart shows the zeros)")
		}
		floor = math.Pow(10, math.Floor(math.Log10(ymin))-1)
		title, ylabel = "Frame loss rate vs offered load (RFC 2544 §26.3, log scale)", "Frame loss (%, log; 0 = none)"
	}
	p := newPlot(title, "Offered load (% of line rate)", ylabel)
	p.X.Min, p.X.Max, p.Y.Min = 0, 100, 0
	p.X.Tick.Marker, p.Y.Tick.Marker = humanTicks{}, humanTicks{}
	// The y axis is scaled to the data: 0.3 % loss must not look like
	// none. Each size has its own colour, marker and dash, so equal
	// series stay visible.
	glyphs := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}
	dashes := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}
	var limited plotter.XYs
	for i, r := range res.FrameLoss {
		xys, lim := lossPoints(r, logScale, floor)
		limited = append(limited, lim...)
		if len(xys) == 0 {
			continue
		}
		l, s, err := line(xys, colorOf(i), false, glyphs[i%len(glyphs)])
		if err != nil {
			return nil, fmt.Errorf("frame loss chart: %w", err)
		}
		l.Dashes = dashes[i%len(dashes)]
		p.Add(l, s)
		p.Legend.Add(sizeLabel(r.FrameSize), l, s)
	}
	if len(limited) > 0 {
		s, err := plotter.NewScatter(limited)
		if err != nil {
			return nil, fmt.Errorf("frame loss chart: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 60}, Radius: vg.Points(7), Shape: draw.TriangleGlyph{}}
		p.Add(s)
		p.Legend.Add("tester-limited: offered < intended", s)
	}
	p.Y.Max = 1 // no loss at all: 0 to 1 %
	if ymax > 0 {
		p.Y.Max = ymax * 1.1
	}
	if logScale {
		logAxis(&p.Y, floor, math.Max(ymax*1.5, floor*10), floorTicks{floor: floor})
	}
	return p, nil
}

// lossPoints are one size's loss points in order of offered load (the
// sweep runs down from 100 % intended, and a tester that fell short offers
// less than a lower step did), y as the chart draws it; lim are those the
// tester could not offer as intended, to be marked.
func lossPoints(r rfc2544.FrameLossResult, logScale bool, floor float64) (xys, lim plotter.XYs) {
	pts := slices.Clone(r.Points)
	slices.SortStableFunc(pts, func(a, b rfc2544.FrameLossPoint) int { return cmp.Compare(a.OfferedPercent, b.OfferedPercent) })
	for _, pt := range pts {
		y := pt.LossPercent
		if logScale {
			y = math.Log10(math.Max(y, floor))
		}
		xys = append(xys, plotter.XY{X: pt.OfferedPercent, Y: y})
		if pt.TesterLimited {
			lim = append(lim, plotter.XY{X: pt.OfferedPercent, Y: y})
		}
	}
	return xys, lim
}

// LatencyCDFChart plots the cumulative latency distribution (from
// trials.LatencySummary.Buckets) at the throughput rate for every frame
// size.
func LatencyCDFChart(res *rfc2544.Results) (*plot.Plot, error) {
	p := newPlot("Latency distribution at the throughput rate (CDF)", "Latency (µs, log scale)", "Frames at or below (%)")
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = humanTicks{}
	n := 0
	xlo, xhi := math.Inf(1), 0.0
	for i, r := range res.Latency {
		dist := latencyDist(r)
		// A step function: the share of frames at or below x holds
		// from one bucket's upper value to the next; from 0 before the
		// first.
		var xys plotter.XYs
		for _, d := range dist {
			if len(xys) == 0 {
				xys = append(xys, plotter.XY{X: math.Log10(d.us), Y: 0})
			}
			xys = append(xys, plotter.XY{X: math.Log10(d.us), Y: d.share * 100})
			xlo, xhi = math.Min(xlo, d.us), math.Max(xhi, d.us)
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("latency cdf chart: %w", err)
		}
		l.StepStyle = plotter.PostStep
		l.Color, l.Width = colorOf(i), vg.Points(1.5)
		l.Dashes = cdfDashes[i%len(cdfDashes)]
		p.Add(l)
		p.Legend.Add(sizeLabel(r.FrameSize), l)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("results hold no latency distribution: the latency test did not run or recorded no histogram buckets")
	}
	logAxis(&p.X, xlo/1.03, xhi*1.03, logTicks{})
	return p, nil
}

// svgInline renders p as an SVG element for embedding in HTML: the XML
// prolog and comments are dropped and the size becomes a viewBox so the
// chart scales with the page.
func svgInline(p *plot.Plot) (string, error) {
	var b bytes.Buffer
	if err := WritePlot(&b, p, SVG); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	return s, nil
}

// pdrPoints are the PDR goal's conditional throughputs per frame size (the
// first goal with a loss ratio above zero), when it is not the first goal
// (whose curve is the throughput itself).
func pdrPoints(res *rfc2544.Results) plotter.XYs {
	var xys plotter.XYs
	for _, r := range res.Throughput {
		_, pdr := rfc2544.NDRPDR(r.Goals)
		if pdr == nil || !pdr.Found || &r.Goals[0] == pdr {
			continue
		}
		xys = append(xys, plotter.XY{X: framing.MeanFrameSize(r.FrameSize), Y: pdr.ConditionalFPS})
	}
	return xys
}
