package trials

import (
	"strings"
	"testing"
	"time"
)

// The figures are from trials measured on the lab (64-byte frames, 3000
// firewall rules): a DUT that pushed back, and a tester at its own ceiling.
func TestHeldBack(t *testing.T) {
	pushedBack := TxPressure{Port: "A", WallNs: 1_063_739_939, CPUNs: 493_699_000, Kicks: 428_641, Refused: 8_717, RingFullWaits: 23_243, RingFullNs: 1_015_537_943}
	atCeiling := TxPressure{Port: "A", WallNs: 1_020_033_022, CPUNs: 936_313_000, Kicks: 20_327}
	pausedNIC := TxPressure{Port: "B", WallNs: 1e9, CPUNs: 9.9e8, Kicks: 1000, Refused: 400}
	tests := []struct {
		name                       string
		p                          TxPressure
		offered, intended, ceiling float64
		want                       bool
		why                        string
	}{
		{"ring held, thread idle", pushedBack, 24457, 1488095, 0, true, "transmit ring was full 95% of the time"},
		{"ring held, far below the ceiling", pushedBack, 24457, 1488095, 720000, true, "on a CPU only 46%"},
		{"at the calibrated ceiling", pushedBack, 700000, 1488095, 720000, false, ""},
		{"busy thread, nothing refused", atCeiling, 637689, 1488095, 0, false, ""},
		{"refused throughout", pausedNIC, 100000, 200000, 0, true, "refused 400 of 1000"},
		{"a few refusals", TxPressure{WallNs: 1e9, CPUNs: 9.9e8, Kicks: 1000, Refused: 3}, 100000, 200000, 0, false, ""},
		{"ring full but thread busy", TxPressure{WallNs: 1e9, CPUNs: 9.5e8, Kicks: 10, RingFullNs: 8e8}, 100000, 900000, 0, false, ""},
		{"no CPU time known", TxPressure{WallNs: 1e9, Kicks: 10, RingFullNs: 8e8}, 100000, 900000, 0, false, ""},
		// An overrun DUT's backlog held the slots for 130 ms of a 1 s
		// trial at 19174 fps: time for 2493 frames; 2471 were not sent.
		{"wait explains the shortfall", TxPressure{Port: "A", WallNs: 1e9, CPUNs: 6e8, Kicks: 5000, RingFullNs: 130e6}, 16703, 19174, 0, true, "waited 130.0 ms"},
		// Measured on the lab (3000 rules, 1518 B at 40 % of 1 Gbit/s):
		// every frame queued on time, the DUT's backlog released the last
		// 49.7 ms after; the offered load counts that time.
		{"drain explains the shortfall", TxPressure{Port: "A", WallNs: 1_049_666_747, CPUNs: 510_341_000, Kicks: 31_884, DrainNs: 49_600_000}, 30971, 32510, 0, true, "waited 49.6 ms for transmit ring slots the kernel held (frames queued in the path, 49.6 ms of it after the last frame was queued)"},
		{"a short drain after a slow sender", TxPressure{WallNs: 1e9, CPUNs: 6e8, Kicks: 5000, DrainNs: 2e6}, 16703, 19174, 0, false, ""},
		{"send buffer full, thread idle", TxPressure{Port: "A", WallNs: 1e9, CPUNs: 3e8, Kicks: 5000, RingFullNs: 6e8, SendBuffer: true}, 30000, 100000, 0, true, "the socket's send buffer was full 60% of the time"},
		{"waited for send-buffer room", TxPressure{Port: "A", WallNs: 1e9, CPUNs: 8e8, Kicks: 5000, RingFullNs: 130e6, SendBuffer: true}, 16703, 19174, 0, true, "waited 130.0 ms for room in the socket's send buffer"},
		{"wait explains a third", TxPressure{WallNs: 1e9, CPUNs: 6e8, Kicks: 5000, RingFullNs: 40e6}, 16703, 19174, 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := HeldBack(tt.p, tt.offered, tt.intended, 1, tt.ceiling)
			if got != tt.want || !strings.Contains(why, tt.why) {
				t.Errorf("HeldBack = %v, %q; want %v containing %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestFlowCheck(t *testing.T) {
	held := &TxPressure{Port: "A", WallNs: 1e9, CPUNs: 4e8, Kicks: 1000, Refused: 100, RingFullNs: 9e8}
	busy := &TxPressure{Port: "A", WallNs: 1e9, CPUNs: 9.8e8, Kicks: 1000}
	short := []string{"stream 1: generator sent 10 of 100 planned frames in time"}
	r := StreamResult{ID: 1, IntendedFPS: 100000, OfferedFPS: 24000, TxSeconds: 1, Sent: 24000, Received: 24000}
	tests := []struct {
		name      string
		press     [2]*TxPressure
		other     []string // other tester limits (kernel drops, ceiling)
		wantFC    bool
		wantLimit bool
	}{
		{"held back", [2]*TxPressure{held}, nil, true, false},
		{"tester busy", [2]*TxPressure{busy}, nil, false, true},
		{"held back but receive drops", [2]*TxPressure{held}, []string{"port B: the receiving side dropped 5 frames"}, false, true},
		{"not measured", [2]*TxPressure{}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fc flowCheck
			var lim limits
			if fc.add(0, r, false, short, tt.press[0], 0) {
				t.Fatal("add passed a shortfall on")
			}
			lim.add(false, tt.other)
			res := Result{Streams: []StreamResult{r}}
			fc.apply(&res, &lim, tt.press, nil, 64)
			lim.apply(&res)
			if res.FlowControlled != tt.wantFC || res.TesterLimited != tt.wantLimit {
				t.Fatalf("flow-controlled %v, tester-limited %v (%q / %q); want %v, %v",
					res.FlowControlled, res.TesterLimited, res.FlowControlReason, res.TesterLimitReason, tt.wantFC, tt.wantLimit)
			}
			if tt.wantFC && !strings.HasPrefix(res.FlowControlReason, "flow-controlled: the DUT held the tester back at 24000 fps (port A:") {
				t.Errorf("reason %q", res.FlowControlReason)
			}
			if !tt.wantFC && !strings.Contains(res.TesterLimitReason, short[0]) {
				t.Errorf("tester-limit reason %q lacks the shortfall", res.TesterLimitReason)
			}
		})
	}
	// Measured on the lab (667 rules, 1416 B at 60 % of a line 2.5× the
	// DUT's capacity): the sender, on a CPU 91 % of the time, fell 1.57 %
	// short; the DUT forwarded far below the load offered.
	over := StreamResult{ID: 1, IntendedFPS: 137952, OfferedFPS: 135785, TxSeconds: 1.016, Sent: 137952, Received: 102686, Lost: 35266,
		Trend: &LatencyTrend{BinNs: 10e6, BusyBins: 90, ForwardedFPS: 101000}}
	busyShort := &TxPressure{Port: "A", WallNs: 1_015_961_518, CPUNs: 920_413_000, Kicks: 73_424, RingFullWaits: 749, RingFullNs: 20_712_376,
		RingFullMaxNs: 984_929, DrainNs: 15_395_006}
	lossless := over
	lossless.Received, lossless.Lost = lossless.Sent, 0
	for _, tt := range []struct {
		name                    string
		r                       StreamResult
		other                   []string
		wantOverload, wantLimit bool
	}{
		{"DUT overloaded at the load offered", over, nil, true, false},
		{"overloaded, but receive-side drops", over, []string{"port B: the receiving side dropped 5 frames"}, false, true},
		{"short and lossless", lossless, nil, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var fc flowCheck
			var lim limits
			short := []string{"stream 1: generator offered 135785 fps, 1.57% below the intended 137952 fps"}
			fc.add(0, tt.r, false, short, busyShort, 0)
			lim.add(false, tt.other)
			res := Result{Streams: []StreamResult{tt.r}}
			fc.apply(&res, &lim, [2]*TxPressure{busyShort}, nil, 1416)
			lim.apply(&res)
			if (res.OverloadReason != "") != tt.wantOverload || res.TesterLimited != tt.wantLimit || res.FlowControlled {
				t.Fatalf("overload %q, tester-limited %v (%q), flow-controlled %v; want overload %v, tester-limited %v",
					res.OverloadReason, res.TesterLimited, res.TesterLimitReason, res.FlowControlled, tt.wantOverload, tt.wantLimit)
			}
			if tt.wantOverload && !strings.Contains(res.OverloadReason, short[0]) {
				t.Errorf("overload reason %q lacks the shortfall", res.OverloadReason)
			}
		})
	}
	var fc flowCheck
	stalled := r
	stalled.MaxLagNs = 40e6
	if !fc.add(0, stalled, true, []string{"stall"}, busy, 2*time.Millisecond) || !fc.add(0, r, false, nil, nil, 0) {
		t.Error("a stall of the tester or no reason must be passed on to the tester limits")
	}
	waited := &TxPressure{WallNs: 1e9, CPUNs: 5e8, RingFullNs: 1e8, RingFullMaxNs: 39e6}
	if fc.add(0, stalled, true, []string{"stall"}, waited, 2*time.Millisecond) {
		t.Error("a stall spent waiting for ring slots the kernel held was blamed on the tester")
	}
}

func TestPauseStat(t *testing.T) {
	for _, tt := range []struct {
		name   string
		rx, tx bool
	}{
		{"rx_pause_frames", true, false},
		{"tx_pause_frames", false, true},
		{"rx_pause_ctrl_phy", true, false},
		{"tx_pause_ctrl_phy", false, true},
		{"rx_flow_control_xoff", true, false},
		{"tx_flow_control_xoff", false, true},
		{"rx_flow_control_xon", false, false},
		{"port.link_xoff_rx", true, false},
		{"port.link_xoff_tx", false, true},
		{"rx_prio3_pause", false, false},
		{"tx_pause_storm_warning_events", false, true},
		{"rx_pause_duration", false, false},
		{"rx_packets", false, false},
	} {
		rx, tx := pauseStat(tt.name)
		if rx != tt.rx || tx != tt.tx {
			t.Errorf("pauseStat(%q) = %v, %v; want %v, %v", tt.name, rx, tx, tt.rx, tt.tx)
		}
	}
	rx, tx := sumPause([]string{"rx_packets", "rx_pause_frames", "tx_pause_frames", "rx_flow_control_xoff"}, []uint64{100, 7, 3, 5})
	if rx != 12 || tx != 3 {
		t.Errorf("sumPause = %d, %d; want 12, 3", rx, tx)
	}
}

func TestPauseWarning(t *testing.T) {
	if w := PauseWarning("port A", "eth1", PauseParam{Autoneg: true}); w != "" {
		t.Errorf("pause off: warning %q", w)
	}
	w := PauseWarning("port A (interface eth1)", "eth1", PauseParam{Autoneg: true, RX: true, TX: true})
	for _, s := range []string{"port A (interface eth1)", "flow control is on", "ethtool -A eth1 autoneg off rx off tx off"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q lacks %q", w, s)
		}
	}
	if ok, why := HeldBack(TxPressure{Port: "A", PauseRx: 1200, PauseCounted: true}, 1e5, 2e5, 1, 0); !ok || !strings.Contains(why, "1200 PAUSE frames") {
		t.Errorf("PAUSE frames received: HeldBack = %v, %q", ok, why)
	}
}
