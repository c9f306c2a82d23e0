package trials

import (
	"math"
	"testing"
)

// TestWindowBps: one window per round trip, sample by sample, averaged;
// samples without a window or an RTT are left out.
func TestWindowBps(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []TCPSample
		want    float64
	}{
		{"none", nil, 0},
		{"no window reported", []TCPSample{{RTTNs: 10e6}}, 0},
		{"steady", []TCPSample{{RTTNs: 10e6, PeerWindowBytes: 12500}, {RTTNs: 10e6, PeerWindowBytes: 12500}}, 10e6},
		// 12.5 kB over 10 ms is 10 Mbit/s, over 12.5 ms 8 Mbit/s.
		{"RTT rose", []TCPSample{{RTTNs: 10e6, PeerWindowBytes: 12500}, {RTTNs: 12.5e6, PeerWindowBytes: 12500}}, 9e6},
		{"a sample without RTT", []TCPSample{{PeerWindowBytes: 99999}, {RTTNs: 20e6, PeerWindowBytes: 25000}}, 10e6},
	} {
		if got := (TCPRun{Samples: tc.samples}).WindowBps(); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: WindowBps %.6g, want %.6g", tc.name, got, tc.want)
		}
	}
}
