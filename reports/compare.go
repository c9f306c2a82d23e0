package reports

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// Comparison is two runs side by side (1500 vs 9000 MTU, firmware A vs B):
// per test, frame size and metric, both values, the delta and the ratio.
// Build it with Compare, write it with WriteComparison or
// WriteComparisonChart; it marshals to JSON as is.
type Comparison struct {
	// A and B describe the two runs; set Label to name them in the output
	// (the CLI uses the file names). Compare labels them "A" and "B".
	A RunSummary `json:"a"`
	B RunSummary `json:"b"`
	// Rows holds every compared value: by test in report order, then frame
	// size, then metric.
	Rows []ComparisonRow `json:"rows"`
	// Notes name whole tests only one run holds, and plan differences that
	// make values not comparable one to one (line rate, direction).
	Notes []string `json:"notes,omitempty"`

	a, b *rfc2544.Results
}

// RunSummary identifies one run of a Comparison.
type RunSummary struct {
	Label   string    `json:"label"`
	Tool    string    `json:"tool"`
	Started time.Time `json:"started"`
	DUT     string    `json:"dut"`
	LinkBps float64   `json:"link_bps"`
}

// Metric names one compared quantity; the name carries its unit.
type Metric string

// The metrics Compare reports.
const (
	MetricThroughputFPS     Metric = "throughput_fps"     // all streams
	MetricThroughputL1Bps   Metric = "throughput_l1_bps"  // on the wire
	MetricThroughputPercent Metric = "throughput_percent" // of line rate
	MetricLatencyMeanNs     Metric = "latency_mean_ns"    // all frames at the throughput rate
	MetricLatencyP99Ns      Metric = "latency_p99_ns"     //
	MetricLatencyMaxNs      Metric = "latency_max_ns"     //
	MetricLossPercent       Metric = "loss_percent"       // at ComparisonRow.LoadPercent
	MetricB2BAvgFrames      Metric = "b2b_avg_frames"     // longest lossless burst, per stream
	MetricB2BCorrectedS     Metric = "b2b_corrected_buffer_s"
	MetricRecoveryS         Metric = "recovery_s"
)

// ComparisonRow is one metric at one frame size in both runs.
type ComparisonRow struct {
	Test      rfc2544.Test `json:"test"`
	FrameSize int          `json:"frame_size"`
	Metric    Metric       `json:"metric"`
	// LoadPercent is the intended load of a frame loss point.
	LoadPercent float64 `json:"load_percent,omitempty"`
	A           Value   `json:"a"`
	B           Value   `json:"b"`
	// Delta is B − A and Ratio B / A, when both runs have a number (Ratio
	// also needs A ≠ 0). Bound is set when either number is a lower bound
	// (tester-limited), so the delta is not exact.
	Delta *float64 `json:"delta,omitempty"`
	Ratio *float64 `json:"ratio,omitempty"`
	Bound bool     `json:"bound,omitempty"`
}

// Value is one run's side of a ComparisonRow.
type Value struct {
	// Present is false when the run did not test this frame size (or load).
	Present bool `json:"present"`
	// V is the number, nil when the size was tested but gave none (not
	// found, skipped, incomplete: Note says which).
	V *float64 `json:"value,omitempty"`
	// AtLeast marks a lower bound: the tester, not the DUT, was the limit.
	AtLeast bool   `json:"at_least,omitempty"`
	Note    string `json:"note,omitempty"`
}

func num(v float64) Value { return Value{Present: true, V: &v} }

func noValue(note string) Value { return Value{Present: true, Note: note} }

// Compare pairs the results of a and b by test, frame size and metric.
func Compare(a, b *rfc2544.Results) Comparison {
	c := Comparison{A: summarize("A", a), B: summarize("B", b), a: a, b: b}
	if a.Plan.LinkBps != b.Plan.LinkBps {
		c.Notes = append(c.Notes, fmt.Sprintf("The runs have different line rates (A %s, B %s): compare fps and bit rates, not percentages.",
			bitRate(a.Plan.LinkBps), bitRate(b.Plan.LinkBps)))
	}
	if a.Plan.Bidirectional != b.Plan.Bidirectional {
		c.Notes = append(c.Notes, fmt.Sprintf("One run is bidirectional and the other is not (A %d stream(s), B %d): rates are totals of all streams.",
			streams(a), streams(b)))
	}
	type sideFn func(res *rfc2544.Results) map[int][]namedValue
	tests := []struct {
		test rfc2544.Test
		has  func(*rfc2544.Results) bool
		vals sideFn
	}{
		{rfc2544.TestThroughput, func(r *rfc2544.Results) bool { return len(r.Throughput) > 0 }, throughputValues},
		{rfc2544.TestLatency, func(r *rfc2544.Results) bool { return len(r.Latency) > 0 }, latencyValues},
		{rfc2544.TestFrameLoss, func(r *rfc2544.Results) bool { return len(r.FrameLoss) > 0 }, frameLossValues},
		{rfc2544.TestBackToBack, func(r *rfc2544.Results) bool { return len(r.BackToBack) > 0 }, backToBackValues},
		{rfc2544.TestRecovery, func(r *rfc2544.Results) bool { return len(r.Recovery) > 0 }, recoveryValues},
	}
	for _, t := range tests {
		ha, hb := t.has(a), t.has(b)
		switch {
		case !ha && !hb:
			continue
		case !hb:
			c.Notes = append(c.Notes, fmt.Sprintf("%s: only in A (B did not run it).", t.test))
			continue
		case !ha:
			c.Notes = append(c.Notes, fmt.Sprintf("%s: only in B (A did not run it).", t.test))
			continue
		}
		va, vb := t.vals(a), t.vals(b)
		sizes := make([]int, 0, len(va)+len(vb))
		for s := range va {
			sizes = append(sizes, s)
		}
		for s := range vb {
			if _, ok := va[s]; !ok {
				sizes = append(sizes, s)
			}
		}
		slices.Sort(sizes)
		for _, size := range sizes {
			// Metrics in the order of whichever side has them, A first.
			keys := []namedValue{}
			seen := map[rowKey]bool{}
			for _, nv := range append(slices.Clone(va[size]), vb[size]...) {
				if k := nv.key(); !seen[k] {
					seen[k] = true
					keys = append(keys, nv)
				}
			}
			for _, k := range keys {
				row := ComparisonRow{Test: t.test, FrameSize: size, Metric: k.metric, LoadPercent: k.load}
				row.A = lookup(va[size], k.key())
				row.B = lookup(vb[size], k.key())
				if row.A.V != nil && row.B.V != nil {
					d := *row.B.V - *row.A.V
					row.Delta = &d
					if *row.A.V != 0 {
						r := *row.B.V / *row.A.V
						row.Ratio = &r
					}
					row.Bound = row.A.AtLeast || row.B.AtLeast
				}
				c.Rows = append(c.Rows, row)
			}
		}
	}
	return c
}

func summarize(label string, r *rfc2544.Results) RunSummary {
	return RunSummary{Label: label, Tool: r.Tool, Started: r.Started, DUT: r.DUT.Description, LinkBps: r.Plan.LinkBps}
}

type rowKey struct {
	metric Metric
	load   float64
}

type namedValue struct {
	metric Metric
	load   float64
	v      Value
}

func (n namedValue) key() rowKey { return rowKey{n.metric, n.load} }

func lookup(vs []namedValue, k rowKey) Value {
	for _, v := range vs {
		if v.key() == k {
			return v.v
		}
	}
	return Value{}
}

func throughputValues(res *rfc2544.Results) map[int][]namedValue {
	out := map[int][]namedValue{}
	for _, r := range res.Throughput {
		var fps, l1, p Value
		switch {
		case r.Incomplete:
			fps, l1, p = noValue("incomplete"), noValue("incomplete"), noValue("incomplete")
		case !r.Found:
			fps, l1, p = noValue("not found"), noValue("not found"), noValue("not found")
		default:
			fps, l1, p = num(r.FPS), num(r.L1Bps), num(r.OfferedPercent)
			fps.AtLeast, l1.AtLeast, p.AtLeast = r.TesterLimited, r.TesterLimited, r.TesterLimited
		}
		out[r.FrameSize] = []namedValue{{metric: MetricThroughputFPS, v: fps}, {metric: MetricThroughputL1Bps, v: l1},
			{metric: MetricThroughputPercent, v: p}}
	}
	return out
}

func latencyValues(res *rfc2544.Results) map[int][]namedValue {
	out := map[int][]namedValue{}
	for _, r := range res.Latency {
		s := r.Summary
		mean, p99, mx := noValue("skipped"), noValue("skipped"), noValue("skipped")
		if r.Skipped == "" && s.Count > 0 {
			mean, p99, mx = num(s.MeanNs), num(float64(s.P99Ns)), num(float64(s.MaxNs))
		} else if r.Skipped == "" {
			mean, p99, mx = noValue("no frame timed"), noValue("no frame timed"), noValue("no frame timed")
		}
		out[r.FrameSize] = []namedValue{{metric: MetricLatencyMeanNs, v: mean}, {metric: MetricLatencyP99Ns, v: p99},
			{metric: MetricLatencyMaxNs, v: mx}}
	}
	return out
}

func frameLossValues(res *rfc2544.Results) map[int][]namedValue {
	out := map[int][]namedValue{}
	for _, r := range res.FrameLoss {
		if r.Skipped != "" {
			out[r.FrameSize] = append(out[r.FrameSize], namedValue{metric: MetricLossPercent, v: noValue("skipped")})
			continue
		}
		for _, p := range r.Points {
			v := num(p.LossPercent)
			if p.TesterLimited {
				v.Note = "tester-limited"
			}
			out[r.FrameSize] = append(out[r.FrameSize], namedValue{metric: MetricLossPercent, load: p.IntendedPercent, v: v})
		}
	}
	return out
}

func backToBackValues(res *rfc2544.Results) map[int][]namedValue {
	out := map[int][]namedValue{}
	for _, r := range res.BackToBack {
		avg, corr := noValue("skipped"), noValue("skipped")
		if r.Skipped == "" {
			avg, corr = num(r.AvgFrames), num(r.CorrectedBufferS)
			avg.AtLeast, corr.AtLeast = r.TesterLimited || r.AtCap, r.TesterLimited || r.AtCap
		}
		out[r.FrameSize] = []namedValue{{metric: MetricB2BAvgFrames, v: avg}, {metric: MetricB2BCorrectedS, v: corr}}
	}
	return out
}

func recoveryValues(res *rfc2544.Results) map[int][]namedValue {
	out := map[int][]namedValue{}
	for _, r := range res.Recovery {
		v := noValue("skipped")
		switch {
		case r.Skipped != "":
		case r.Incomplete:
			v = noValue("incomplete")
		case !r.Recovered:
			v = noValue("not recovered")
		default:
			v = num(r.RecoveryS)
		}
		out[r.FrameSize] = []namedValue{{metric: MetricRecoveryS, v: v}}
	}
	return out
}

// metricDisplay is how a metric is shown: its label and a formatter for a
// value (and, with sign, for a delta).
var metricDisplay = map[Metric]struct {
	label string
	f     func(float64) string
}{
	MetricThroughputFPS:     {"throughput (fps)", fps},
	MetricThroughputL1Bps:   {"throughput (Mbit/s L1)", mbps},
	MetricThroughputPercent: {"throughput (% of line)", pct},
	MetricLatencyMeanNs:     {"mean (µs)", func(v float64) string { return usec(v) }},
	MetricLatencyP99Ns:      {"P99 (µs)", func(v float64) string { return usec(v) }},
	MetricLatencyMaxNs:      {"max (µs)", func(v float64) string { return usec(v) }},
	MetricLossPercent:       {"loss (%)", pct},
	MetricB2BAvgFrames:      {"avg burst (frames)", func(v float64) string { return grouped(v, 1) }},
	MetricB2BCorrectedS:     {"corrected buffer (ms)", msec},
	MetricRecoveryS:         {"recovery time (ms)", msec},
}

func (r ComparisonRow) label() string {
	l := metricDisplay[r.Metric].label
	if r.Metric == MetricLossPercent && r.LoadPercent > 0 {
		l = fmt.Sprintf("loss (%%) at %g%% load", r.LoadPercent)
	}
	return l
}

func (r ComparisonRow) cell(v Value, other string) string {
	switch {
	case !v.Present:
		return dash + " (only in " + other + ")"
	case v.V == nil:
		return v.Note
	}
	s := metricDisplay[r.Metric].f(*v.V)
	if v.AtLeast {
		s = "≥ " + s
	}
	if v.Note != "" {
		s += " (" + v.Note + ")"
	}
	return s
}

func (r ComparisonRow) deltaCells() (string, string) {
	switch {
	case !r.A.Present:
		return "only in B", dash
	case !r.B.Present:
		return "only in A", dash
	case r.Delta == nil:
		return dash, dash
	}
	d := metricDisplay[r.Metric].f(*r.Delta)
	if *r.Delta > 0 {
		d = "+" + d
	}
	ratio := dash
	if r.Ratio != nil {
		ratio = "×" + strconv.FormatFloat(*r.Ratio, 'f', 3, 64)
	}
	if r.Bound {
		d += " (bound)"
		if r.Ratio != nil {
			ratio += " (bound)"
		}
	}
	return d, ratio
}

// comparisonTables builds one table per test.
func comparisonTables(c Comparison) []*table {
	var out []*table
	titles := map[rfc2544.Test]string{
		rfc2544.TestThroughput: "Throughput (RFC 2544 §26.1)",
		rfc2544.TestLatency:    "Latency at the throughput rate (RFC 2544 §26.2)",
		rfc2544.TestFrameLoss:  "Frame loss rate (RFC 2544 §26.3)",
		rfc2544.TestBackToBack: "Back-to-back frames (RFC 2544 §26.4, RFC 9004)",
		rfc2544.TestRecovery:   "System recovery (RFC 2544 §26.5)",
	}
	var cur *table
	lastSize := -1
	for _, r := range c.Rows {
		if cur == nil || cur.Title != titles[r.Test] {
			cur = newTable(Table(r.Test), titles[r.Test], ">Frame size (B)", "Metric", ">A: "+c.A.Label, ">B: "+c.B.Label, ">Δ (B − A)", ">B / A")
			out = append(out, cur)
			lastSize = -1
		}
		size := ""
		if r.FrameSize != lastSize {
			size, lastSize = framing.SizeName(r.FrameSize), r.FrameSize
		}
		d, ratio := r.deltaCells()
		cur.add(size, r.label(), r.cell(r.A, "B"), r.cell(r.B, "A"), d, ratio)
	}
	return out
}

// WriteComparison writes c as text tables: who A and B are, then one table
// per test with both values, the delta B − A and the ratio B / A; frame
// sizes only one run has are shown as "— (only in B)".
func WriteComparison(w io.Writer, c Comparison) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "RFC 2544 comparison")
	for _, s := range []struct {
		k string
		r RunSummary
	}{{"A", c.A}, {"B", c.B}} {
		fmt.Fprintf(bw, "  %s: %s\n", s.k, escapeControl(s.r.Label))
		if err := writeWrapped(bw, "     ", "     ", escapeControl(fmt.Sprintf("%s; %s link; started %s", orDash(s.r.DUT), bitRate(s.r.LinkBps), when(s.r.Started)))); err != nil {
			return err
		}
	}
	for _, n := range c.Notes {
		fmt.Fprintln(bw, "  Note: "+n)
	}
	tables := comparisonTables(c)
	if len(tables) == 0 {
		fmt.Fprintln(bw, "\nThe runs have no test in common.")
	}
	for _, t := range tables {
		fmt.Fprintln(bw)
		if err := renderText(bw, t); err != nil {
			return fmt.Errorf("render %s comparison: %w", t.Name, err)
		}
	}
	return bw.Flush()
}

// ComparisonChart overlays the throughput of both runs against frame size,
// with each run's theoretical line rate (one line when they share it).
func ComparisonChart(c Comparison) (*plot.Plot, error) {
	if c.a == nil || c.b == nil {
		return nil, fmt.Errorf("comparison chart: build the Comparison with Compare")
	}
	if len(c.a.Throughput) == 0 && len(c.b.Throughput) == 0 {
		return nil, fmt.Errorf("comparison chart: neither run holds throughput results")
	}
	p := newPlot("Throughput vs frame size: A vs B", "Frame size (bytes, FCS included)", "Throughput (frames/s, all streams)")
	p.Y.Tick.Marker = humanTicks{}
	p.Y.Min = 0
	p.Legend.Top = true
	amin, amax := sizeRange(c.a)
	bmin, bmax := sizeRange(c.b)
	lo, hi := math.Min(amin, bmin), math.Max(amax, bmax)
	frameSizeAxis(&p.X, lo, hi)
	sameLine := c.a.Plan.LinkBps == c.b.Plan.LinkBps && streams(c.a) == streams(c.b)
	ymax := 0.0
	for i, side := range []struct {
		res   *rfc2544.Results
		label string
	}{{c.a, sideLabel("A", c.A.Label)}, {c.b, sideLabel("B", c.B.Label)}} {
		if len(side.res.Throughput) == 0 {
			continue
		}
		st := throughputStyle{name: side.label, color: 2 * i, theory: i == 0 || !sameLine, glyph: draw.CircleGlyph{}}
		if i == 1 {
			st.glyph, st.dashes = draw.SquareGlyph{}, []vg.Length{vg.Points(8), vg.Points(3)}
		}
		if sameLine && i == 0 {
			st.name = "" // the shared line rate needs no run name
		}
		y, err := addThroughputNamed(p, side.res, st, side.label, lo, hi)
		if err != nil {
			return nil, err
		}
		ymax = math.Max(ymax, y)
	}
	p.Y.Max = ymax * 1.05
	return p, nil
}

// addThroughputNamed draws one run with its measured curves labelled by name
// (the theoretical line keeps st.name).
func addThroughputNamed(p *plot.Plot, res *rfc2544.Results, st throughputStyle, name string, lo, hi float64) (float64, error) {
	if st.theory {
		theoryOnly := st
		theoryOnly.measured = false
		if _, err := addThroughput(p, res, theoryOnly, lo, hi); err != nil {
			return 0, err
		}
	}
	st.theory, st.name, st.measured = false, name, true
	y, err := addThroughput(p, res, st, lo, hi)
	if err != nil {
		return 0, err
	}
	return math.Max(y, lineRateFPS(res, int(lo))), nil
}

// measuredSizes are the smallest and largest frame sizes (an IMIX at its
// mean size) the runs' throughput results hold.
func measuredSizes(runs ...*rfc2544.Results) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, r := range runs {
		l, h := sizeRange(r)
		lo, hi = math.Min(lo, l), math.Max(hi, h)
	}
	return lo, hi
}

// sideLabel names run A or B in a legend: "A", or "A mtu1500.json".
func sideLabel(side, label string) string {
	if label == "" || label == side {
		return side
	}
	return side + " " + label
}

// WriteComparisonChart draws ComparisonChart in format.
func WriteComparisonChart(w io.Writer, c Comparison, format ImageFormat) error {
	p, err := ComparisonChart(c)
	if err != nil {
		return err
	}
	return WritePlot(w, p, format)
}

// Runs is N runs of one question (0 / 100 / 1,000 / 10,000 firewall rules,
// 1500 vs 9000 MTU, firmware A, B and C): the throughput of each per frame
// size, in a table with one column per run and a chart with one line per
// run. Build it with CompareRuns; it marshals to JSON as is.
type Runs struct {
	Runs []RunSummary `json:"runs"`
	// Sizes are every frame size any run measured, ascending.
	Sizes []int `json:"frame_sizes"`
	// FPS holds, per run (in Runs order) and size (in Sizes order), the
	// throughput in frames per second; a Value with no number says why
	// (not measured, not found, incomplete); AtLeast marks a tester-limited
	// lower bound.
	FPS [][]Value `json:"throughput_fps"`
	// Notes say, per run, when a value is a flow-controlled DUT rate.
	Notes []string `json:"notes,omitempty"`

	res []*rfc2544.Results
}

// CompareRuns lines up the throughput results of runs, labelled by labels
// (same length).
func CompareRuns(runs []*rfc2544.Results, labels []string) Runs {
	out := Runs{res: runs}
	seen := map[int]bool{}
	for i, r := range runs {
		out.Runs = append(out.Runs, summarize(labels[i], r))
		for _, t := range r.Throughput {
			if !seen[t.FrameSize] {
				seen[t.FrameSize] = true
				out.Sizes = append(out.Sizes, t.FrameSize)
			}
		}
	}
	slices.Sort(out.Sizes)
	for i, r := range runs {
		row := make([]Value, len(out.Sizes))
		vals := throughputValues(r)
		for j, f := range out.Sizes {
			if v := lookup(vals[f], rowKey{metric: MetricThroughputFPS}); v.Present {
				row[j] = v
			} else {
				row[j] = noValue("not run")
			}
		}
		out.FPS = append(out.FPS, row)
		for _, t := range r.Throughput {
			if t.Found && t.Note != "" {
				out.Notes = append(out.Notes, fmt.Sprintf("%s, %s: %s", labels[i], sizeLabel(t.FrameSize), t.Note))
			}
		}
	}
	return out
}

// runsCell formats one value of a Runs table.
func runsCell(v Value) string {
	switch {
	case v.V == nil:
		return "— (" + v.Note + ")"
	case v.AtLeast:
		return "≥ " + fps(*v.V) + " (tester-limited)"
	}
	return fps(*v.V)
}

// WriteRuns writes rs as a text table: one row per frame size, one column
// per run, throughput in frames per second.
func WriteRuns(w io.Writer, rs Runs) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "RFC 2544 comparison of %d runs\n", len(rs.Runs))
	cols := []string{">Frame size (B)"}
	for i, r := range rs.Runs {
		fmt.Fprintf(bw, "  %d: %s\n", i+1, escapeControl(r.Label))
		if err := writeWrapped(bw, "     ", "     ", escapeControl(fmt.Sprintf("%s; %s link; started %s", orDash(r.DUT), bitRate(r.LinkBps), when(r.Started)))); err != nil {
			return err
		}
		cols = append(cols, ">"+r.Label)
	}
	t := newTable(TableThroughput, "Throughput (fps, RFC 2544 §26.1)", cols...)
	for j, f := range rs.Sizes {
		cells := []string{strconv.Itoa(f)}
		for i := range rs.Runs {
			cells = append(cells, runsCell(rs.FPS[i][j]))
		}
		t.add(cells...)
	}
	t.Notes = append(t.Notes, rs.Notes...)
	fmt.Fprintln(bw)
	if err := renderText(bw, t); err != nil {
		return fmt.Errorf("render comparison: %w", err)
	}
	return bw.Flush()
}

// RunsChart draws one throughput line per run against frame size: the
// values of the table (WriteRuns), each run's markers joined by a line, a
// tester-limited value (a lower bound) ringed by a triangle, and the
// theoretical line rate (once per line rate the runs have). The throughput
// axis is logarithmic when the runs span more than a factor of 20 (0 vs
// 10,000 rules), so every line stays readable; a size without a number is
// left out there (the table says why) and marked at 0 on a linear axis.
//
// The logarithmic axis is logAxis's (log10 values on a linear scale):
// gonum's LogScale squeezed the plot of a 0 to 10,000-rule sweep into the
// lower half of the chart.
func RunsChart(rs Runs) (*plot.Plot, error) {
	if len(rs.res) == 0 || len(rs.Sizes) == 0 {
		return nil, fmt.Errorf("comparison chart: no run holds throughput results")
	}
	p := newPlot(fmt.Sprintf("Throughput vs frame size, %d runs", len(rs.Runs)), "Frame size (bytes, FCS included)", "Throughput (frames/s, all streams)")
	p.Legend.Top = true
	lo, hi := measuredSizes(rs.res...)
	frameSizeAxis(&p.X, lo, hi) // labels hi, the largest size measured
	if lo == hi {
		lo, hi = lo/1.15, hi*1.15 // the line rate across the axis (frameSizeAxis's margin)
	}
	ymin, ymax := math.Inf(1), 0.0
	for i := range rs.res {
		for _, v := range rs.FPS[i] {
			if v.V != nil && *v.V > 0 {
				ymin, ymax = math.Min(ymin, *v.V), math.Max(ymax, *v.V)
			}
		}
	}
	logY := !math.IsInf(ymin, 1) && ymax/ymin > 20
	y := func(fps float64) float64 { // the chart's Y of a throughput
		if logY {
			return math.Log10(fps)
		}
		return fps
	}

	// The theoretical line rate, once per line rate (named by the first
	// run with it when the runs differ).
	type lineKey struct {
		bps     float64
		streams int
	}
	var lines []lineKey
	first := map[lineKey]int{}
	for i, r := range rs.res {
		if k := (lineKey{r.Plan.LinkBps, streams(r)}); !slices.Contains(lines, k) {
			lines, first[k] = append(lines, k), i
		}
	}
	for n, k := range lines {
		var xys plotter.XYs
		const samples = 120
		for s := 0; s <= samples; s++ {
			f := lo * math.Pow(hi/lo, float64(s)/samples)
			fps := framing.LineRateFPS(k.bps, int(math.Round(f))) * float64(k.streams)
			if fps <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: f, Y: y(fps)})
			ymax = math.Max(ymax, fps)
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("comparison chart: %w", err)
		}
		l.Color, l.Width, l.Dashes = colorOf(1+2*n), vg.Points(1.5), []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		name := "theoretical line rate (" + bitRate(k.bps) + ")"
		if len(lines) > 1 {
			name = rs.Runs[first[k]].Label + ": " + name
		}
		p.Legend.Add(name, l)
	}

	var limited, missing plotter.XYs
	for i := range rs.res {
		var pts plotter.XYs
		for j, size := range rs.Sizes {
			x := framing.MeanFrameSize(size)
			switch v := rs.FPS[i][j]; {
			case v.V == nil || *v.V <= 0:
				if !logY && v.Note != "not run" {
					missing = append(missing, plotter.XY{X: x, Y: 0})
				}
			default:
				pts = append(pts, plotter.XY{X: x, Y: y(*v.V)})
				if v.AtLeast {
					limited = append(limited, plotter.XY{X: x, Y: y(*v.V)})
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		c := colorOf(runColors[i%len(runColors)])
		r := rs.res[i]
		lineY := func(f float64) float64 {
			return y(framing.LineRateFPS(r.Plan.LinkBps, int(math.Round(f))) * float64(streams(r)))
		}
		l, sc, err := line(guide(pts, lineY), c, i%2 == 1, glyphs[i%len(glyphs)])
		if err != nil {
			return nil, fmt.Errorf("comparison chart: %w", err)
		}
		if sc, err = markers(pts, c, glyphs[i%len(glyphs)]); err != nil {
			return nil, fmt.Errorf("comparison chart: %w", err)
		}
		p.Add(l, sc)
		p.Legend.Add(rs.Runs[i].Label, l, sc)
	}
	if len(limited) > 0 {
		s, err := markers(limited, color.Gray{Y: 90}, draw.TriangleGlyph{})
		if err != nil {
			return nil, fmt.Errorf("comparison chart: %w", err)
		}
		s.GlyphStyle.Radius = vg.Points(7)
		p.Add(s)
		p.Legend.Add("≥ tester-limited (a lower bound)", s)
	}
	if len(missing) > 0 {
		s, err := markers(missing, color.RGBA{200, 0, 0, 255}, draw.CrossGlyph{})
		if err != nil {
			return nil, fmt.Errorf("comparison chart: %w", err)
		}
		p.Add(s)
		p.Legend.Add("no throughput (the table says why)", s)
	}
	if logY {
		logAxis(&p.Y, ymin/1.5, ymax*1.5, logTicks{})
	} else {
		p.Y.Tick.Marker = humanTicks{}
		p.Y.Min, p.Y.Max = 0, ymax*1.05
	}
	return p, nil
}

// guide is the line drawn through a run's measured points (ascending X,
// a frame size on the log axis): straight on the chart between neighbours,
// but never above lineY, the run's theoretical line rate. A straight line
// between two sizes measured at line rate would otherwise cut above the
// line-rate curve and claim a throughput no link carries.
func guide(pts plotter.XYs, lineY func(f float64) float64) plotter.XYs {
	if len(pts) < 2 {
		return pts
	}
	const steps = 24
	var out plotter.XYs
	for k := 0; k+1 < len(pts); k++ {
		a, b := pts[k], pts[k+1]
		for s := 0; s < steps; s++ {
			t := float64(s) / steps
			f := a.X * math.Pow(b.X/a.X, t) // straight on the log axis
			// Not below the lower end either: a point measured a hair
			// above the line rate keeps its line level.
			ceiling := math.Max(lineY(f), math.Min(a.Y, b.Y))
			out = append(out, plotter.XY{X: f, Y: math.Min(a.Y+(b.Y-a.Y)*t, ceiling)})
		}
	}
	return append(out, pts[len(pts)-1])
}

// runColors are the palette entries of the runs' lines: not 1 (nor 3),
// which the theoretical line rates use (colorOf(color+1)).
var runColors = []int{0, 2, 4, 5, 6, 8, 9, 7}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// WriteRunsChart draws RunsChart in format.
func WriteRunsChart(w io.Writer, rs Runs, format ImageFormat) error {
	p, err := RunsChart(rs)
	if err != nil {
		return err
	}
	return WritePlot(w, p, format)
}
