package reports

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

func compareFixtures(t *testing.T) Comparison {
	t.Helper()
	c := Compare(loadFixture(t, fixture1500), loadFixture(t, fixture9000))
	c.A.Label, c.B.Label = "mtu1500.json", "mtu9000.json"
	return c
}

func TestGoldenComparison(t *testing.T) {
	c := compareFixtures(t)
	var b bytes.Buffer
	if err := WriteComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_1500_9000.txt", b.Bytes())

	var svg bytes.Buffer
	if err := WriteComparisonChart(&svg, c, SVG); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare_1500_9000.svg", svg.Bytes())
	var pb bytes.Buffer
	if err := WriteComparisonChart(&pb, c, PNG); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&pb); err != nil {
		t.Fatalf("comparison PNG does not decode: %v", err)
	}
	if dir := os.Getenv("REPORTS_CHART_DIR"); dir != "" {
		var pb bytes.Buffer
		WriteComparisonChart(&pb, c, PNG)
		os.WriteFile(dir+"/compare.png", pb.Bytes(), 0o644)
	}
}

// TestCompareMTU checks the 1500-vs-9000 question: jumbo sizes only on the
// 9000 side, deltas where both runs have a number.
func TestCompareMTU(t *testing.T) {
	c := compareFixtures(t)
	type cell struct {
		Present, HasValue, AtLeast bool
		Note                       string
	}
	type row struct {
		A, B     cell
		HasDelta bool
	}
	got := map[int]row{}
	for _, r := range c.Rows {
		if r.Test == rfc2544.TestThroughput && r.Metric == MetricThroughputFPS {
			got[r.FrameSize] = row{
				A:        cell{r.A.Present, r.A.V != nil, r.A.AtLeast, r.A.Note},
				B:        cell{r.B.Present, r.B.V != nil, r.B.AtLeast, r.B.Note},
				HasDelta: r.Delta != nil,
			}
			if r.Delta != nil && *r.Delta != *r.B.V-*r.A.V {
				t.Errorf("%d B: delta %g, want B − A = %g", r.FrameSize, *r.Delta, *r.B.V-*r.A.V)
			}
		}
	}
	both := row{A: cell{true, true, false, ""}, B: cell{true, true, false, ""}, HasDelta: true}
	want := map[int]row{
		64:   {A: cell{true, true, true, ""}, B: cell{true, true, true, ""}, HasDelta: true},
		128:  both,
		256:  both,
		512:  both,
		1024: both,
		1280: both,
		1518: both,
		1522: {A: cell{true, false, false, "not found"}, B: cell{true, true, false, ""}},
		4096: {A: cell{}, B: cell{true, true, false, ""}},
		9018: {A: cell{}, B: cell{true, true, false, ""}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("throughput rows (-want +got):\n%s", diff)
	}
	for _, n := range []string{"frame_loss: only in A (B did not run it).", "system_recovery: only in A (B did not run it)."} {
		if !slicesContains(c.Notes, n) {
			t.Errorf("notes %q lack %q", c.Notes, n)
		}
	}
	var b bytes.Buffer
	if err := WriteComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"— (only in B)", "only in B", "not found"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("comparison text lacks %q", s)
		}
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("comparison does not marshal: %v", err)
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestCompareSelf(t *testing.T) {
	res := loadFixture(t, fixture1500)
	c := Compare(res, res)
	if len(c.Rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range c.Rows {
		if !r.A.Present || !r.B.Present {
			t.Errorf("%s %d %s: a run compared with itself has a one-sided row", r.Test, r.FrameSize, r.Metric)
		}
		if r.Delta != nil && *r.Delta != 0 {
			t.Errorf("%s %d %s: delta %g comparing a run with itself", r.Test, r.FrameSize, r.Metric, *r.Delta)
		}
		if r.Ratio != nil && *r.Ratio != 1 {
			t.Errorf("%s %d %s: ratio %g comparing a run with itself", r.Test, r.FrameSize, r.Metric, *r.Ratio)
		}
	}
}

// TestRunsChartFrameSizeAxis: the frame-size axis of an N-run chart labels
// the sizes measured: one size (a sweep at 512 B) is labelled 512, not a
// round number beside it, and a sweep of 64, 512 and 1518 B labels all three.
func TestRunsChartFrameSizeAxis(t *testing.T) {
	for _, tt := range []struct {
		sizes []int
		want  []string // labels that must be on the axis
		only  bool     // and no other label
	}{
		{sizes: []int{512}, want: []string{"512"}, only: true},
		{sizes: []int{64, 512, 1518}, want: []string{"64", "512", "1518"}},
	} {
		var runs []*rfc2544.Results
		for _, f := range []model{fixture1500, fixture9000} {
			r := loadFixture(t, f)
			var kept []rfc2544.ThroughputResult
			for _, tr := range r.Throughput {
				if slices.Contains(tt.sizes, tr.FrameSize) {
					kept = append(kept, tr)
				}
			}
			r.Throughput = kept
			runs = append(runs, r)
		}
		p, err := RunsChart(CompareRuns(runs, []string{"0 rules", "1000 rules"}))
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		for _, w := range tt.want {
			if !slicesContains(labels, w) {
				t.Errorf("sizes %v: axis labels %q, want %s among them", tt.sizes, labels, w)
			}
		}
		if tt.only && len(labels) != len(tt.want) {
			t.Errorf("sizes %v: axis labels %q, want only %q", tt.sizes, labels, tt.want)
		}
	}
}

// TestRunsChartLines: a sweep whose throughputs span 100× (0 to 10,000
// rules) draws one legend entry per run and one for the line rate (no
// per-run NDR/PDR pair), on a log throughput axis that fills the chart:
// drawn as log10 values on a linear scale, so the axis label gonum sizes
// the plot for sits at the middle (on gonum's LogScale it sat near the top
// and the plot took the lower half of the chart).
func TestRunsChartLines(t *testing.T) {
	var runs []*rfc2544.Results
	labels := []string{"0 rules", "100 rules", "1000 rules", "10000 rules"}
	for _, scale := range []float64{1, 0.6, 0.1, 0.01} {
		r := loadFixture(t, fixture1500)
		for i := range r.Throughput {
			r.Throughput[i].FPS *= scale
		}
		runs = append(runs, r)
	}
	rs := CompareRuns(runs, labels)
	p, err := RunsChart(rs)
	if err != nil {
		t.Fatal(err)
	}
	if mid := p.Y.Norm((p.Y.Min + p.Y.Max) / 2); math.Abs(mid-0.5) > 1e-9 {
		t.Errorf("the middle of the throughput axis normalizes to %.3f, want 0.5 (the plot is sized for the axis label there)", mid)
	}
	if _, ok := p.Y.Scale.(plot.LinearScale); !ok || p.Y.Max > 10 {
		t.Errorf("throughput axis %T over [%g, %g]: want log10 values on a linear scale", p.Y.Scale, p.Y.Min, p.Y.Max)
	}
	var svg bytes.Buffer
	if err := WritePlot(&svg, p, SVG); err != nil {
		t.Fatal(err)
	}
	for _, l := range append(labels, "theoretical line rate (1 Gbit/s)") {
		if n := strings.Count(svg.String(), ">"+l+"<"); n != 1 {
			t.Errorf("legend entry %q drawn %d times, want once", l, n)
		}
	}
	for _, no := range []string{"PDR", "NDR"} {
		if strings.Contains(svg.String(), no) {
			t.Errorf("the chart names %s: want one line per run, the table's throughput", no)
		}
	}
}

// TestRunsChartGuide: the line through a run's points never rises above
// its line rate (two sizes measured at line rate follow the curve between
// them, where a straight line cut above it), and a flat run stays flat.
func TestRunsChartGuide(t *testing.T) {
	lineRate := func(f float64) float64 { return framing.LineRateFPS(1e9, int(math.Round(f))) }
	atLine := plotter.XYs{{X: 512, Y: lineRate(512)}, {X: 1518, Y: lineRate(1518)}}
	for _, xy := range guide(atLine, lineRate) {
		if xy.Y > lineRate(xy.X)*(1+1e-9) {
			t.Errorf("guide at %.0f B: %.0f fps, above the line rate %.0f", xy.X, xy.Y, lineRate(xy.X))
		}
	}
	flat := plotter.XYs{{X: 64, Y: 7000}, {X: 512, Y: 7000}, {X: 1518, Y: 7000}}
	g := guide(flat, lineRate)
	for _, xy := range g {
		if xy.Y != 7000 {
			t.Errorf("flat run: guide at %.0f B is %.0f, want 7000", xy.X, xy.Y)
		}
	}
	if g[0] != flat[0] || g[len(g)-1] != flat[2] {
		t.Errorf("guide runs %v to %v, want from the first point to the last", g[0], g[len(g)-1])
	}
}
