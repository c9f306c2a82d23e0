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
		// A 2 s trial at 10 kfps with a 30 ms grace: cut off 180 frames
		// (18 ms) short after a 200 ms stall it made up 182 ms of
		// (transient); a generator too slow for the rate is worst behind
		// at the cut (lasting).
		{"behind its plan after a stall it made up", paced(19820, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 19820 / 2.03, TxSeconds: 2.03, Sent: 19820, Received: 19820, MaxLagNs: int64(200 * time.Millisecond)}, false, true, true, "48.1 ms behind at the end"},
		{"behind its plan, slower than the rate", paced(18000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 18000 / 2.03, TxSeconds: 2.03, Sent: 18000, Received: 18000, MaxLagNs: int64(230 * time.Millisecond)}, false, true, false, "18000 of 20000"},
		{"offered below intended after a stall it made up", paced(20000, 0), StreamResult{IntendedFPS: fps, OfferedFPS: 20000 / 2.02, TxSeconds: 2.02, Sent: 20000, Received: 20000, MaxLagNs: int64(150 * time.Millisecond)}, false, true, true, "a stall of this host"},
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

// TestStallShortfallPassedOn: a burst short of its rate by a stall shorter
// than the stall bound, with no ring slot held, is passed on as a transient
// limit (CI on 2026-12-01: a 1.0 ms stall made a back-to-back burst 1.2 %
// short, and the main job exited 3); with ring slots held the shortfall
// goes to the flow-control check instead.
func TestStallShortfallPassedOn(t *testing.T) {
	r := StreamResult{IntendedFPS: 89286, OfferedFPS: 88211, Sent: 5580, TxSeconds: 5580 / 88211.0, MaxLagNs: int64(time.Millisecond)}
	st := &streamState{spec: Stream{ID: 1}, pacer: Pacer{RateFPS: 89286, Total: 5580}, queued: 5580}
	transient, reasons := generatorReasons(st, r, r.IntendedFPS, 0.01, DefaultMaxLag, false)
	if !transient || len(reasons) != 1 {
		t.Fatalf("transient %v reasons %q: want one transient stall", transient, reasons)
	}
	var f flowCheck
	if !f.add(0, r, transient, reasons, &TxPressure{WallNs: 63e6}, DefaultMaxLag) || len(f.short[0]) != 0 {
		t.Errorf("no ring slot held: passed on false or short %q; want passed on as a stall", f.short[0])
	}
	var g flowCheck
	if g.add(0, r, transient, reasons, &TxPressure{WallNs: 63e6, RingFullWaits: 3, RingFullNs: 2e6, RingFullMaxNs: 1e6}, DefaultMaxLag) || len(g.short[0]) != 1 {
		t.Errorf("ring slots held: want the shortfall kept for the flow-control check, got short %q", g.short[0])
	}
}

// TestLossExplained: a trial's loss is the tester's own only when every
// stream that lost frames fell behind by more than the stall bound and
// caught up with a burst that could hold all it lost, and the DUT was not
// seen forwarding below the offered rate.
func TestLossExplained(t *testing.T) {
	stalled := StreamResult{ID: 1, IntendedFPS: 10000, OfferedFPS: 10000, Sent: 20000, Received: 19900, Lost: 100, MaxLagNs: int64(50 * time.Millisecond)} // a 500-frame burst
	clean := StreamResult{ID: 2, IntendedFPS: 10000, OfferedFPS: 10000, Sent: 20000, Received: 20000}
	tooMuch := stalled
	tooMuch.Received, tooMuch.Lost = 19000, 1000
	overloaded := stalled
	overloaded.Trend = &LatencyTrend{BusyBins: 40, ForwardedFPS: 9000, BinNs: int64(10 * time.Millisecond)}
	tests := []struct {
		name    string
		streams []StreamResult
		want    bool
	}{
		{"no loss", []StreamResult{clean}, false},
		{"every lossy stream explained", []StreamResult{stalled, clean}, true},
		{"one lossy stream beyond its burst", []StreamResult{stalled, tooMuch}, false},
		{"explained but the DUT forwarded below the offered rate", []StreamResult{overloaded}, false},
	}
	for _, tt := range tests {
		if got := lossExplained(Result{Streams: tt.streams}, DefaultMaxLag); got != tt.want {
			t.Errorf("%s: explained %v, want %v", tt.name, got, tt.want)
		}
	}
}
