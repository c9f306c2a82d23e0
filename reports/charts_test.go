package reports

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoldenCharts(t *testing.T) {
	res := loadFixture(t, fixture1500)
	for _, kind := range Charts {
		t.Run(string(kind), func(t *testing.T) {
			var svg bytes.Buffer
			if err := WriteChart(&svg, res, kind, SVG); err != nil {
				t.Fatal(err)
			}
			golden(t, "mtu1500_"+string(kind)+".svg", svg.Bytes())

			var b bytes.Buffer
			if err := WriteChart(&b, res, kind, PNG); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatalf("PNG does not decode: %v", err)
			}
			if got := img.Bounds().Size(); got.X != 768 || got.Y != 480 {
				t.Errorf("PNG is %v pixels, want 768x480", got)
			}
			if dir := os.Getenv("REPORTS_CHART_DIR"); dir != "" {
				os.WriteFile(filepath.Join(dir, string(kind)+".png"), b.Bytes(), 0o644)
			}
			_ = strings.Contains
		})
	}
}

// TestLogTicksLabelEnds: a log axis inside one decade (the CDF of 20 to
// 37 µs) still has labels, at least at its lowest and highest tick.
func TestLogTicksLabelEnds(t *testing.T) {
	for _, r := range [][2]float64{{20, 37}, {21, 29}, {1, 1e4}, {11, 44}, {8.6, 7800}} {
		ticks := (logTicks{}).Ticks(r[0], r[1])
		var labels []string
		var at []float64
		for _, tk := range ticks {
			if tk.Label != "" {
				labels, at = append(labels, tk.Label), append(at, tk.Value)
			}
		}
		if len(labels) < 2 || ticks[0].Label == "" || ticks[len(ticks)-1].Label == "" {
			t.Errorf("log axis %v: labels %q, want the two ends labelled", r, labels)
		}
		// Labels do not collide: 6 % of the axis apart at least (9
		// beside 10 on a 9…7800 axis did).
		for i := 1; i < len(at); i++ {
			if math.Log10(at[i]/at[i-1]) < 0.06*math.Log10(r[1]/r[0]) {
				t.Errorf("log axis %v: labels %q and %q collide", r, labels[i-1], labels[i])
			}
		}
	}
}

// TestChartsScaledToData: the loss axis follows the data (0.3 % must not
// look like none), and every measured frame size is a tick, labelled unless
// within a fifth of an octave of a larger one (1280 beside 1518 is).
func TestChartsScaledToData(t *testing.T) {
	res := loadFixture(t, fixture1500)
	p, err := FrameLossChart(res)
	if err != nil {
		t.Fatal(err)
	}
	maxLoss := 0.0
	for _, r := range res.FrameLoss {
		for _, pt := range r.Points {
			maxLoss = max(maxLoss, pt.LossPercent)
		}
	}
	if p.Y.Max > maxLoss*1.2 || p.Y.Max < maxLoss {
		t.Errorf("loss axis up to %g%% for data up to %g%%", p.Y.Max, maxLoss)
	}
	tp, err := ThroughputChart(res)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, tk := range tp.X.Tick.Marker.Ticks(tp.X.Min, tp.X.Max) {
		labels[tk.Label] = true
	}
	for _, want := range []string{"64", "128", "256", "512", "1024", "1280", "1522"} {
		if !labels[want] {
			t.Errorf("throughput x axis lacks a label at %s: %v", want, labels)
		}
	}
}
