package trials

import (
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
