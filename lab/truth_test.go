package lab

import (
	"math"
	"testing"
)

// TestTruthAtoB: the shaper's rate and the back-to-back model from the
// settings, worked by hand for the reference DUT (30 Mbit/s, 100 packets,
// the default 10 ms bucket of 37,500 bytes) on a 60 Mbit/s line; none for
// a DUT that does more than shape.
func TestTruthAtoB(t *testing.T) {
	c := Config{Name: "t", AtoB: Shaping{RateBps: 30e6, LimitPackets: 100}, BtoA: Shaping{RateBps: 30e6, LimitPackets: 100}}
	for _, tt := range []struct {
		size     int
		fps, b2b float64
	}{
		// 64 B: R = 30e6/(8·60) = 62,500 fps; line 60e6/(8·84) = 89,285.7;
		// N = (100 + 37,500/60) / (1 − 62,500/89,285.7) = 725/0.3 = 2,416.7.
		{64, 62500, 725 / (1 - 62500/(60e6/672))},
		// 1518 B: R = 30e6/(8·1514) = 2,476.9 fps; line 60e6/(8·1538) =
		// 4,876.5; N = (100 + 37,500/1514) / (1 − R/line).
		{1518, 30e6 / (8 * 1514), (100 + 37500.0/1514) / (1 - (30e6/(8*1514))/(60e6/(8*1538)))},
	} {
		got, ok := c.TruthAtoB(tt.size, 60e6)
		if !ok || math.Abs(got.ThroughputFPS-tt.fps) > 1e-6*tt.fps || math.Abs(got.BackToBackFrames-tt.b2b) > 1e-6*tt.b2b {
			t.Errorf("%d B: got %+v (%v), want %.1f fps, %.1f frames", tt.size, got, ok, tt.fps, tt.b2b)
		}
	}
	if got, ok := c.TruthAtoB(64, 20e6); !ok || got.BackToBackFrames != 0 {
		t.Errorf("a line slower than R: %+v, want no back-to-back model", got)
	}
	for name, d := range map[string]Config{
		"unshaped":  {Name: "t"},
		"loss":      {Name: "t", AtoB: Shaping{RateBps: 30e6, LossPercent: 1}},
		"firewall":  {Name: "t", AtoB: Shaping{RateBps: 30e6}, FWRules: 10},
		"relay":     {Name: "t", DUT: DUTRelay, AtoB: Shaping{RateBps: 30e6}},
		"loop":      {Name: "t", Topology: TopologyLoop},
		"too large": {Name: "t", AtoB: Shaping{RateBps: 30e6}, MTUA: 1500, MTUB: 1500},
	} {
		size := 64
		if name == "too large" {
			size = 9018
		}
		if got, ok := d.TruthAtoB(size, 60e6); ok {
			t.Errorf("%s: truth %+v, want none", name, got)
		}
	}
}
