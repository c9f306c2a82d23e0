//go:build linux

package trials

import (
	"strings"
	"testing"
)

// TestXDPJudgeNamesCeiling: the xdp transport's verdict names the
// calibrated ceiling for a trial asked at or above it that is tester-limited
// already (behind its plan), lossless or not, and makes the limit lasting;
// below the ceiling, or with no other limit and no loss, it adds nothing.
// Pure: no sockets (the engine's state only).
func TestXDPJudgeNamesCeiling(t *testing.T) {
	behind := "stream 1: generator sent 763504 of 1598740 planned frames in time"
	for _, tt := range []struct {
		name     string
		load     float64
		reasons  []string
		lost     uint64
		named    bool
		limited  bool
		lastingT bool
	}{
		{"behind, above the ceiling, lossless", 1.6e6, []string{behind}, 0, true, true, true},
		{"behind, above the ceiling, lossy", 1.6e6, []string{behind}, 10, true, true, true},
		{"not behind, above the ceiling, lossy", 1.6e6, nil, 10, true, true, true},
		{"not behind, above the ceiling, lossless", 1.6e6, nil, 0, false, false, false},
		{"behind, below the ceiling", 4e5, []string{behind}, 0, false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &XDPEngine{cfg: Config{CeilingFPS: map[int]float64{64: 8e5}}}
			res := Result{Streams: []StreamResult{{ID: 1, Sent: 1000, Received: 1000 - tt.lost, Lost: tt.lost}}}
			var lim limits
			lim.add(true, tt.reasons) // a stall-like reason: transient on its own
			e.judge(&res, &lim, Spec{FrameSize: 64}, [2]float64{tt.load, 0})
			lim.apply(&res)
			named := strings.Contains(res.TesterLimitReason, "calibrated ceiling 800000 fps at 64 bytes")
			if named != tt.named || res.TesterLimited != tt.limited || (res.TesterLimited && res.TesterLimitTransient == tt.lastingT) {
				t.Errorf("reason %q, limited %v, transient %v; want ceiling named %v, limited %v, lasting %v",
					res.TesterLimitReason, res.TesterLimited, res.TesterLimitTransient, tt.named, tt.limited, tt.lastingT)
			}
		})
	}
}
