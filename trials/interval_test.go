package trials

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestIntervalsCount(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want int
	}{
		{Spec{Duration: 3 * time.Second}, 3},
		{Spec{Duration: 3500 * time.Millisecond}, 4},
		{Spec{Duration: 60 * time.Second}, 60},
		{Spec{Duration: 200 * time.Millisecond}, 1},
		{Spec{Duration: 5 * time.Second, BurstFrames: 100}, 1},
	} {
		if got := Intervals(c.spec); got != c.want {
			t.Errorf("Intervals(duration %v, burst %d) = %d, want %d", c.spec.Duration, c.spec.BurstFrames, got, c.want)
		}
	}
}

// TestIntervalBuilder feeds three readings and checks each record and that
// the records add up to the totals.
func TestIntervalBuilder(t *testing.T) {
	var b intervalBuilder
	counts := func(lat ...int64) liveCounts {
		var c liveCounts
		c.reset()
		for _, d := range lat {
			c.frame(d)
		}
		return c
	}
	ivs := []Interval{
		b.next(time.Second, 4, counts(10, 30, 20), false),
		b.next(2*time.Second, 8, counts(), false), // nothing arrived
		b.next(2500*time.Millisecond, 10, counts(5, -3, 40, 7, 9, 11), true),
	}
	want := []Interval{
		{Index: 0, StartNs: 0, EndNs: 1e9, Offered: 4, Received: 3, SentSoFar: 4, ReceivedSoFar: 3, LossSoFarPercent: 25,
			LatencyMinNs: 10, LatencyAvgNs: 20, LatencyMaxNs: 30},
		{Index: 1, StartNs: 1e9, EndNs: 2e9, Offered: 4, Received: 0, SentSoFar: 8, ReceivedSoFar: 3, LossSoFarPercent: 62.5},
		{Index: 2, StartNs: 2e9, EndNs: 2.5e9, Final: true, Offered: 2, Received: 6, SentSoFar: 10, ReceivedSoFar: 9, LossSoFarPercent: 10,
			LatencyMinNs: 0, LatencyAvgNs: 12, LatencyMaxNs: 40}, // -3 counts as 0
	}
	var off, rx uint64
	for i, iv := range ivs {
		if iv != want[i] {
			t.Errorf("interval %d = %+v\nwant %+v", i, iv, want[i])
		}
		off += iv.Offered
		rx += iv.Received
	}
	if off != 10 || rx != 9 {
		t.Errorf("intervals add up to offered %d, received %d; want 10, 9", off, rx)
	}
}

// TestLiveMeter: counts reach take only once published, and a take starts
// the next interval afresh.
func TestLiveMeter(t *testing.T) {
	m := newLiveMeter()
	m.pend.frame(100)
	m.pend.frame(300)
	if c := m.take(); c.received != 0 || c.latN != 0 {
		t.Fatalf("take before publish = %+v, want nothing", c)
	}
	m.publish()
	m.pend.frame(50)
	m.publish()
	c := m.take()
	if c.received != 3 || c.latN != 3 || c.latSum != 450 || c.latMin != 50 || c.latMax != 300 {
		t.Errorf("take = %+v, want 3 frames, sum 450, min 50, max 300", c)
	}
	if c := m.take(); c.received != 0 || c.latMin != math.MaxInt64 || c.latMax != 0 {
		t.Errorf("second take = %+v, want empty", c)
	}
	if n := testing.AllocsPerRun(100, func() { m.pend.frame(7); m.publish() }); n != 0 {
		t.Errorf("frame+publish allocates %v times, want 0", n)
	}
}

// TestIntervalJSON: the record's field names, and a Spec's OnInterval is not
// in its JSON.
func TestIntervalJSON(t *testing.T) {
	b, err := json.Marshal(Interval{Index: 2, EndNs: 1, Final: true, Offered: 5, Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"index":2`, `"start_ns":0`, `"end_ns":1`, `"final":true`, `"offered":5`, `"received":0`,
		`"sent_so_far":0`, `"received_so_far":0`, `"loss_so_far_percent":0`, `"latency_min_ns":0`, `"latency_avg_ns":0`, `"latency_max_ns":0`, `"partial":true`} {
		if !strings.Contains(string(b), f) {
			t.Errorf("interval JSON %s lacks %s", b, f)
		}
	}
	s, err := json.Marshal(Spec{FrameSize: 64, OnInterval: func(Interval) {}})
	if err != nil {
		t.Fatalf("Spec with OnInterval: %v", err)
	}
	if strings.Contains(string(s), "interval") {
		t.Errorf("Spec JSON %s carries OnInterval", s)
	}
}
