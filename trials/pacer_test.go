package trials

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPacerPace(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		p        Pacer
		elapsed  time.Duration
		sent     uint64
		wantWait time.Duration
		wantN    int
	}{
		{name: "first frame due at 0", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: 0, sent: 0, wantN: 1},
		{name: "wait for the second", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: 0, sent: 1, wantWait: ms},
		{name: "partial wait", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: 300 * time.Microsecond, sent: 1, wantWait: 700 * time.Microsecond},
		{name: "behind: backlog at once", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: 4500 * time.Microsecond, sent: 2, wantN: 3},
		{name: "backlog capped by batch", p: Pacer{RateFPS: 1000, Total: 100, MaxBatch: 4}, elapsed: 50 * ms, sent: 0, wantN: 4},
		{name: "backlog capped by total", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: time.Second, sent: 8, wantN: 2},
		{name: "done", p: Pacer{RateFPS: 1000, Total: 10}, elapsed: time.Second, sent: 10},
		{name: "unlimited rate: a batch", p: Pacer{Total: 1000}, elapsed: 0, sent: 0, wantN: 64},
		{name: "unlimited rate: tail", p: Pacer{Total: 1000, MaxBatch: 256}, elapsed: 0, sent: 900, wantN: 100},
		{name: "unlimited and endless", p: Pacer{MaxBatch: 8}, elapsed: time.Hour, sent: 1 << 40, wantN: 8},
		{name: "rate change: before", p: Pacer{RateFPS: 1000, Total: 100, Change: &RateChange{At: 10 * ms, RateFPS: 100}},
			elapsed: 9500 * time.Microsecond, sent: 10, wantWait: 500 * time.Microsecond},
		{name: "rate change: at the switch", p: Pacer{RateFPS: 1000, Total: 100, Change: &RateChange{At: 10 * ms, RateFPS: 100}},
			elapsed: 10 * ms, sent: 10, wantN: 1},
		{name: "rate change: new spacing", p: Pacer{RateFPS: 1000, Total: 100, Change: &RateChange{At: 10 * ms, RateFPS: 100}},
			elapsed: 15 * ms, sent: 11, wantWait: 5 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, n := tt.p.Pace(tt.elapsed, tt.sent)
			if diff := cmp.Diff([2]int64{int64(tt.wantWait), int64(tt.wantN)}, [2]int64{int64(w), int64(n)}); diff != "" {
				t.Errorf("Pace(%v, %d) (wait, n) mismatch (-want +got):\n%s", tt.elapsed, tt.sent, diff)
			}
		})
	}
}

func TestNewDurationPacer(t *testing.T) {
	tests := []struct {
		name      string
		rate      float64
		d         time.Duration
		change    *RateChange
		wantTotal uint64
		lastAt    time.Duration
	}{
		{name: "1 kfps for 1 s", rate: 1000, d: time.Second, wantTotal: 1000, lastAt: 999 * time.Millisecond},
		{name: "fractional rate", rate: 2.5, d: time.Second, wantTotal: 3, lastAt: 800 * time.Millisecond},
		{name: "148809.52 fps for 60 s", rate: 148809.52, d: time.Minute, wantTotal: 8928572},
		{name: "rate change halves", rate: 1000, d: 2 * time.Second, change: &RateChange{At: time.Second, RateFPS: 500},
			wantTotal: 1500, lastAt: time.Second + 998*time.Millisecond},
		{name: "change after the end is ignored", rate: 1000, d: time.Second, change: &RateChange{At: 2 * time.Second, RateFPS: 5},
			wantTotal: 1000, lastAt: 999 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewDurationPacer(tt.rate, tt.d, tt.change, 0)
			if p.Total != tt.wantTotal {
				t.Errorf("Total = %d, want %d", p.Total, tt.wantTotal)
			}
			if last := p.SendTime(p.Total - 1); last >= tt.d || (tt.lastAt > 0 && (last-tt.lastAt).Abs() > time.Microsecond) {
				t.Errorf("last frame at %v, want %v (< %v)", last, tt.lastAt, tt.d)
			}
		})
	}
}

// TestPacerSimulated drives a pacer with a simulated clock that wakes late by
// a varying amount: the frames sent by any time never exceed the schedule,
// never fall behind it by more than the wake-up error, and the total is exact.
func TestPacerSimulated(t *testing.T) {
	p := NewDurationPacer(12345, time.Second, &RateChange{At: 400 * time.Millisecond, RateFPS: 3000}, 32)
	var el time.Duration
	var sent uint64
	late := []time.Duration{0, 7 * time.Microsecond, 130 * time.Microsecond, 1 * time.Microsecond}
	for i := 0; !p.Done(sent); i++ {
		w, n := p.Pace(el, sent)
		if n > 0 {
			sent += uint64(n)
			if due := p.due(el); sent > due {
				t.Fatalf("at %v sent %d frames, only %d due", el, sent, due)
			}
			el += 2 * time.Microsecond // the batch takes time
			continue
		}
		el += w + late[i%len(late)]
	}
	if want := uint64(4938 + 1800); sent != want { // ⌈0.4·12345⌉ + 0.6·3000
		t.Errorf("sent %d, want %d", sent, want)
	}
	if el > time.Second+time.Millisecond {
		t.Errorf("finished at %v, want about 1 s", el)
	}
}

func TestPacerAllocs(t *testing.T) {
	p := NewDurationPacer(1e6, time.Second, nil, 256)
	var sink int
	if n := testing.AllocsPerRun(1000, func() {
		_, k := p.Pace(123*time.Millisecond, 1000)
		sink += k
	}); n != 0 {
		t.Errorf("Pace allocates %v times per call, want 0", n)
	}
}

func TestPacerStep(t *testing.T) {
	ms := time.Millisecond
	// 1000 fps for 1 s, spread at most 5 %, after 0.5 ms.
	p := NewDurationPacer(1000, time.Second, nil, 32)
	tests := []struct {
		name     string
		elapsed  time.Duration
		sent     uint64
		c        CatchUp
		wantWait time.Duration
		wantN    int
		wantC    CatchUp
	}{
		{name: "on schedule", elapsed: 0, sent: 0, wantN: 1},
		{name: "small lag: backlog at once", elapsed: 2*ms + 400*time.Microsecond, sent: 2, wantN: 1},
		{name: "stall: spread, nothing now", elapsed: 100*ms + 500*time.Microsecond, sent: 90,
			wantWait: 500 * time.Microsecond, wantC: CatchUp{Sent: 90, Due: 101, Overspeed: 11.0 / 899}},
		{name: "stall late: capped at 5 %", elapsed: 950 * ms, sent: 800,
			wantWait: ms, wantC: CatchUp{Sent: 800, Due: 951, Overspeed: 0.05}},
		{name: "catching up: 1.05 per scheduled frame", elapsed: 40 * ms, sent: 5 + 20,
			c: CatchUp{Sent: 5, Due: 21, Overspeed: 0.05}, wantN: 1, wantC: CatchUp{Sent: 5, Due: 21, Overspeed: 0.05}},
		{name: "catching up: next one later", elapsed: 40 * ms, sent: 5 + 21,
			c: CatchUp{Sent: 5, Due: 21, Overspeed: 0.05}, wantWait: ms, wantC: CatchUp{Sent: 5, Due: 21, Overspeed: 0.05}},
		{name: "caught up: back on schedule", elapsed: 400 * ms, sent: 400,
			c: CatchUp{Sent: 5, Due: 21, Overspeed: 0.05}, wantN: 1},
		{name: "schedule ended: the rest at once", elapsed: 999 * ms, sent: 950,
			c: CatchUp{Sent: 900, Due: 990, Overspeed: 0.05}, wantN: 32},
		{name: "done", elapsed: time.Second, sent: 1000, c: CatchUp{Sent: 900, Due: 990, Overspeed: 0.05}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, n, c := p.Step(tt.elapsed, tt.sent, tt.c)
			if w != tt.wantWait || n != tt.wantN {
				t.Errorf("Step(%v, %d) = wait %v n %d, want %v %d", tt.elapsed, tt.sent, w, n, tt.wantWait, tt.wantN)
			}
			if diff := cmp.Diff(tt.wantC, c, cmpApprox); diff != "" {
				t.Errorf("catch-up state mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpApprox = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })

// TestPacerStall drives a 1 s trial at 12,000 fps (the 512 B rate of a
// 50 Mbit/s DUT) with a simulated clock whose thread stalls once: the
// backlog of a stall up to 40 ms is spread so that no 1 ms window carries
// more than 5 % over the rate (plus one batch, 32 frames: the ordinary
// wake-up error), every planned frame goes out by the end, and only a stall too
// late to absorb leaves a burst at the last frame.
func TestPacerStall(t *testing.T) {
	const fps = 12000
	for _, tt := range []struct {
		name      string
		at, stall time.Duration
		wantBurst bool
	}{
		{name: "4 ms early", at: 100 * time.Millisecond, stall: 4 * time.Millisecond},
		{name: "15 ms mid-trial", at: 500 * time.Millisecond, stall: 15 * time.Millisecond},
		{name: "40 ms early", at: 50 * time.Millisecond, stall: 40 * time.Millisecond},
		{name: "8 ms at 99 %: too late to spread", at: 990 * time.Millisecond, stall: 8 * time.Millisecond, wantBurst: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewDurationPacer(fps, time.Second, nil, 32)
			var (
				el, stalled time.Duration
				sent        uint64
				c           CatchUp
				peak        float64
				sends       []time.Duration // send time of every frame
			)
			for !p.Done(sent) {
				if stalled == 0 && el >= tt.at {
					el += tt.stall
					stalled = tt.stall
				}
				w, n, next := p.Step(el, sent, c)
				c = next
				peak = max(peak, c.Overspeed)
				if n > 0 {
					for range n {
						sends = append(sends, el)
					}
					sent += uint64(n)
					el += time.Microsecond
					continue
				}
				el += w + 20*time.Microsecond // wakes a little late
			}
			if sent != p.Total {
				t.Fatalf("sent %d, want %d", sent, p.Total)
			}
			if peak > DefaultMaxOverspeed+1e-9 || peak == 0 {
				t.Errorf("peak overspeed %.4f, want (0, %.2f]", peak, DefaultMaxOverspeed)
			}
			// The most frames sent in any 1 ms window after the stall.
			const win = time.Millisecond
			most, j := 0, 0
			for i := range sends {
				for sends[i]-sends[j] >= win {
					j++
				}
				if sends[i] > tt.at+tt.stall {
					most = max(most, i-j+1)
				}
			}
			limit := int(fps*win.Seconds()*(1+DefaultMaxOverspeed)) + 32
			last := sends[len(sends)-1]
			if tt.wantBurst {
				if most <= limit {
					t.Errorf("most frames in 1 ms %d, want a burst over %d", most, limit)
				}
			} else if most > limit {
				t.Errorf("most frames in 1 ms after the stall %d, want ≤ %d (5 %% over the rate)", most, limit)
			}
			if last > time.Second+time.Millisecond {
				t.Errorf("last frame at %v, want by the end of the schedule", last)
			}
			t.Logf("stall %v at %v: peak overspeed %.2f %%, at most %d frames per ms (rate: %d), last frame at %v",
				tt.stall, tt.at, 100*peak, most, int(fps*win.Seconds()), last)
		})
	}
}

func TestPacerStepAllocs(t *testing.T) {
	p := NewDurationPacer(1e6, time.Second, nil, 32)
	c := CatchUp{Sent: 1000, Due: 5000, Overspeed: 0.05}
	var sink int
	if n := testing.AllocsPerRun(1000, func() {
		_, k, next := p.Step(123*time.Millisecond, 4000, c)
		sink += k + int(next.Due)
	}); n != 0 {
		t.Errorf("Step allocates %v times per call, want 0", n)
	}
}
