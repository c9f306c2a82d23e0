//go:build linux

package trials

import (
	"strings"
	"testing"
)

// TestXDPJudgeNamesCeiling: the xdp transport's verdict names the
// calibrated ceiling (800,000 fps here) for a trial asked at or above it
// that lost frames, or that is tester-limited already, or whose generator
// fell short while offering near the ceiling, or asked above it and not
// held back by the path (its pressure measured), and makes the limit
// lasting; a sender far below the ceiling that the path held back (or
// whose pressure is unknown), a load below the ceiling, or a lossless trial
// with no shortfall get no ceiling reason. Pure: no sockets (the engine's state only).
func TestXDPJudgeNamesCeiling(t *testing.T) {
	stall := "stream 1: generator fell 3.0 ms behind schedule"
	behind := "stream 1: generator sent 686874 of 1564380 planned frames in time"
	for _, tt := range []struct {
		name    string
		load    float64 // intended fps of port A
		reasons []string
		short   []string // the generator's lasting shortfall (flowCheck)
		offered float64  // port A's offered fps
		lost    uint64
		named   bool
		limited bool
		lasting bool
	}{
		{"short near the ceiling, lossless", 1.6e6, nil, []string{behind}, 7e5, 0, true, true, true},
		{"short near the ceiling, lossy", 1.6e6, nil, []string{behind}, 7e5, 10, true, true, true},
		{"stalled, above the ceiling, lossless", 1.6e6, []string{stall}, nil, 7.9e5, 0, true, true, true},
		{"not short, above the ceiling, lossy", 1.6e6, nil, nil, 7.9e5, 10, true, true, true},
		{"not short, above the ceiling, lossless", 1.6e6, nil, nil, 7.9e5, 0, false, false, false},
		{"short far below the ceiling, lossless", 1.6e6, nil, []string{behind}, 3e5, 0, false, true, true},
		{"short far below the ceiling, on a CPU throughout, lossless", 1.6e6, nil, []string{behind}, 4.7e5, 0, true, true, true},
		{"short far below the ceiling, held back by the path", 1.6e6, nil, []string{behind}, 3e5, 0, false, false, false},
		{"stalled, below the ceiling", 4e5, []string{stall}, nil, 3.9e5, 0, false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &XDPEngine{cfg: Config{CeilingFPS: map[int]float64{64: 8e5}}}
			e.trial.fc.short[0] = tt.short
			e.trial.fc.fps[0], e.trial.fc.intended[0], e.trial.fc.txs[0] = tt.offered, tt.load, 1
			switch {
			case strings.Contains(tt.name, "on a CPU throughout"):
				// CI on 2026-12-02: the thread on a CPU 98 % of the trial,
				// never waiting for the ring.
				e.trial.press[0] = &TxPressure{Port: "A", WallNs: 1e9, CPUNs: 0.98e9, Kicks: 22774}
			case strings.Contains(tt.name, "held back"):
				// The ring full 80 % of the trial, the thread on a CPU 30 %.
				e.trial.press[0] = &TxPressure{Port: "A", WallNs: 1e9, CPUNs: 0.3e9, Kicks: 1000, RingFullWaits: 500, RingFullNs: 0.8e9, RingFullMaxNs: 5e6}
			}
			res := Result{Streams: []StreamResult{{ID: 1, Sent: 1000, Received: 1000 - tt.lost, Lost: tt.lost}}}
			var lim limits
			lim.add(true, tt.reasons) // a stall: transient on its own
			e.judge(&res, &lim, Spec{FrameSize: 64}, [2]float64{tt.load, 0})
			lim.apply(&res)
			named := strings.Contains(res.TesterLimitReason, "calibrated ceiling 800000 fps at 64 bytes")
			if named != tt.named || res.TesterLimited != tt.limited || (res.TesterLimited && res.TesterLimitTransient == tt.lasting) {
				t.Errorf("reason %q, limited %v, transient %v; want ceiling named %v, limited %v, lasting %v",
					res.TesterLimitReason, res.TesterLimited, res.TesterLimitTransient, tt.named, tt.limited, tt.lasting)
			}
		})
	}
}
