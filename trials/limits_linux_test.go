//go:build linux

package trials

import (
	"strings"
	"testing"
	"time"
)

// A stall whose catch-up burst explains the loss is the only transient
// tester limit: with any other reason beside it the trial is not.
func TestLimitsTransient(t *testing.T) {
	const fps = 10000
	paced := func(queued, failed uint64) *streamState {
		return &streamState{spec: Stream{ID: 1}, pacer: Pacer{RateFPS: fps, Total: 20000}, queued: queued, failed: failed}
	}
	stalled := StreamResult{IntendedFPS: fps, OfferedFPS: fps, Sent: 20000, Received: 19950, Lost: 50, MaxLagNs: int64(6 * time.Millisecond)}
	tests := []struct {
		name          string
		st            *streamState
		r             StreamResult
		kernelDrops   bool
		wantLimited   bool
		wantTransient bool
		wantReason    string
	}{
		{"no limit", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: fps, Sent: 20000, Received: 20000, MaxLagNs: int64(6 * time.Millisecond)}, false, false, false, ""},
		{"stall explains the loss", paced(20000, 0), stalled, false, true, true, "6.0 ms behind schedule"},
		{"stall too short to explain the loss", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: fps, Sent: 20000, Received: 19000, Lost: 1000, MaxLagNs: int64(6 * time.Millisecond)}, false, false, false, ""},
		{"stall beside kernel drops", paced(20000, 0), stalled, true, true, false, "dropped"},
		{"offered below intended", paced(20000, 0), StreamResult{OfferedFPS: fps * 0.9, Sent: 18000, Received: 18000}, false, true, false, "below the intended"},
		{"offered below intended by a stall", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 20000 / 2.004, TxSeconds: 2.004, Sent: 20000, Received: 20000, MaxLagNs: int64(4 * time.Millisecond)}, false, true, true, "a stall of this host"},
		{"offered below intended by more than the lag", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 20000 / 2.004, TxSeconds: 2.004, Sent: 20000, Received: 20000, MaxLagNs: int64(1 * time.Millisecond)}, false, true, false, "below the intended"},
		{"offered below intended, lag beyond a stall", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 20000 / 2.2, TxSeconds: 2.2, Sent: 20000, Received: 20000, MaxLagNs: int64(200 * time.Millisecond)}, false, true, false, "below the intended"},
		{"kernel refused frames", paced(20000, 3), stalled, false, true, false, "refused 3"},
		{"generator behind its plan", paced(15000, 0), stalled, false, true, false, "15000 of 20000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lim limits
			lim.add(generatorReasons(tt.st, tt.r, fps, 0.001, DefaultMaxLag, false))
			if tt.kernelDrops {
				lim.add(false, []string{"port b: the receiving side dropped 7 frames in the kernel"})
			}
			var res Result
			lim.apply(&res)
			if res.TesterLimited != tt.wantLimited || res.TesterLimitTransient != tt.wantTransient {
				t.Fatalf("limited %v transient %v (%q), want %v %v", res.TesterLimited, res.TesterLimitTransient, res.TesterLimitReason, tt.wantLimited, tt.wantTransient)
			}
			if !strings.Contains(res.TesterLimitReason, tt.wantReason) {
				t.Errorf("reason %q lacks %q", res.TesterLimitReason, tt.wantReason)
			}
		})
	}
}
