package framing

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLineRateFPSRFC5180 reproduces the maximum frame rate table of
// RFC 5180 (and RFC 2544 App. A for the Ethernet rows), rounded down.
//
// One published cell is not rounded down: 9216 bytes at 1 Gbit/s is
// 1e9/(9236*8) = 13533.997 frames/s, printed as 13,534 (rounded to nearest;
// the 10 Gbit/s cell of the same row, 135339.98, is printed rounded down).
// The want column holds the floor, 13533; TestRFC5180RoundedCell pins the
// published figure.
func TestLineRateFPSRFC5180(t *testing.T) {
	links := []float64{10e6, 100e6, 1e9, 10e9}
	tests := []struct {
		name string
		size int
		want []int64 // frames/s at 10M, 100M, 1G, 10G
	}{
		{name: "64", size: 64, want: []int64{14880, 148809, 1488095, 14880952}},
		{name: "128", size: 128, want: []int64{8445, 84459, 844594, 8445945}},
		{name: "256", size: 256, want: []int64{4528, 45289, 452898, 4528985}},
		{name: "512", size: 512, want: []int64{2349, 23496, 234962, 2349624}},
		{name: "1024", size: 1024, want: []int64{1197, 11973, 119731, 1197318}},
		{name: "1280", size: 1280, want: []int64{961, 9615, 96153, 961538}},
		{name: "1518", size: 1518, want: []int64{812, 8127, 81274, 812743}},
		{name: "9216", size: 9216, want: []int64{135, 1353, 13533, 135339}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			for _, l := range links {
				got = append(got, int64(math.Floor(LineRateFPS(l, tt.size))))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LineRateFPS(…, %d) rounded down (-want +got):\n%s", tt.size, diff)
			}
		})
	}
}

func TestRFC5180RoundedCell(t *testing.T) {
	got := LineRateFPS(1e9, 9216)
	if math.Floor(got) != 13533 || math.Round(got) != 13534 {
		t.Errorf("LineRateFPS(1e9, 9216) = %v, want 13533.x rounding to the published 13,534", got)
	}
}

func TestRateConversions(t *testing.T) {
	const eps = 1e-9
	tests := []struct {
		name      string
		fps       float64
		size      int
		linkBps   float64
		wantL1    float64
		wantL2    float64
		wantPct   float64
		wantGap   time.Duration
		wantMaxFS float64
	}{
		{
			name: "64 bytes at 1G line rate", fps: 1e9 / 672, size: 64, linkBps: 1e9,
			wantL1: 1e9, wantL2: 1e9 * 64 / 84, wantPct: 100, wantGap: 672 * time.Nanosecond, wantMaxFS: 1e9 / 672,
		},
		{
			name: "1518 bytes, 40k fps on 1G", fps: 40000, size: 1518, linkBps: 1e9,
			wantL1: 40000 * 1538 * 8, wantL2: 40000 * 1518 * 8, wantPct: 40000 / (1e9 / (1538 * 8)) * 100,
			wantGap: 25 * time.Microsecond, wantMaxFS: 1e9 / (1538 * 8),
		},
		{
			name: "9216 bytes, 1 fps on 10G", fps: 1, size: 9216, linkBps: 10e9,
			wantL1: 9236 * 8, wantL2: 9216 * 8, wantPct: 100 / (10e9 / (9236 * 8)),
			wantGap: time.Second, wantMaxFS: 10e9 / (9236 * 8),
		},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= eps*math.Max(1, math.Abs(b)) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := L1Bps(tt.fps, tt.size); !near(got, tt.wantL1) {
				t.Errorf("L1Bps = %v, want %v", got, tt.wantL1)
			}
			if got := L2Bps(tt.fps, tt.size); !near(got, tt.wantL2) {
				t.Errorf("L2Bps = %v, want %v", got, tt.wantL2)
			}
			if got := LineRateFPS(tt.linkBps, tt.size); !near(got, tt.wantMaxFS) {
				t.Errorf("LineRateFPS = %v, want %v", got, tt.wantMaxFS)
			}
			pct := FPSToPercent(tt.fps, tt.linkBps, tt.size)
			if !near(pct, tt.wantPct) {
				t.Errorf("FPSToPercent = %v, want %v", pct, tt.wantPct)
			}
			if back := PercentToFPS(pct, tt.linkBps, tt.size); !near(back, tt.fps) {
				t.Errorf("PercentToFPS(FPSToPercent(%v)) = %v", tt.fps, back)
			}
			if got := InterFrameTime(tt.fps); got != tt.wantGap {
				t.Errorf("InterFrameTime(%v) = %v, want %v", tt.fps, got, tt.wantGap)
			}
		})
	}
}

func TestRateEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{name: "line rate of zero size", got: LineRateFPS(1e9, 0), want: 0},
		{name: "line rate of zero link", got: LineRateFPS(0, 64), want: 0},
		{name: "percent of zero link", got: FPSToPercent(100, 0, 64), want: 0},
		{name: "50 percent of 10G at 64", got: PercentToFPS(50, 10e9, 64), want: 10e9 / 672 / 2},
		{name: "L2 of zero fps", got: L2Bps(0, 1518), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if math.Abs(tt.got-tt.want) > 1e-6 {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	for _, fps := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if got := InterFrameTime(fps); got != 0 {
			t.Errorf("InterFrameTime(%v) = %v, want 0", fps, got)
		}
	}
}
