package rfc2544

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// TestSimIntervals: a simulated 3.5 s bidirectional trial above the DUT's
// capacity yields 4 intervals (the last Final, through the settle wait)
// whose frames add up to the streams' totals, with the queue's latency
// growing while it fills; and the records change no figure of the trial.
func TestSimIntervals(t *testing.T) {
	mk := func() *SimDUT {
		return &SimDUT{LinkBps: 1e9, CapacityFPS: 50000, BufferFrames: 20000, BaseLatency: 10 * time.Microsecond,
			LossProbability: 1e-4, Jitter: time.Microsecond, Seed: 7}
	}
	spec := trials.Spec{FrameSize: 512, RateFPS: 60000, Duration: 3500 * time.Millisecond, Settle: 2 * time.Second,
		Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}}}
	plain, err := mk().Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var ivs []trials.Interval
	spec.OnInterval = func(iv trials.Interval) { ivs = append(ivs, iv) }
	res, err := mk().Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(plain)
	b, _ := json.Marshal(res)
	if string(a) != string(b) {
		t.Errorf("the trial's result differs with OnInterval:\n%s\n%s", a, b)
	}
	if res.Spec.OnInterval != nil {
		t.Error("Result.Spec keeps OnInterval")
	}
	if len(ivs) != 4 {
		t.Fatalf("%d intervals, want 4: %+v", len(ivs), ivs)
	}
	var sent, rcvd, off, rx uint64
	for _, s := range res.Streams {
		sent += s.Sent
		rcvd += s.Received
	}
	for i, iv := range ivs {
		t.Logf("%+v", iv)
		off += iv.Offered
		rx += iv.Received
		if iv.Index != i || iv.Final != (i == 3) || (i > 0 && iv.StartNs != ivs[i-1].EndNs) {
			t.Errorf("interval %d: index %d final %v start %d", i, iv.Index, iv.Final, iv.StartNs)
		}
		if i < 3 && (iv.Offered < 119999 || iv.Offered > 120001) {
			t.Errorf("interval %d offered %d, want 120000 (two streams at 60000 fps for 1 s)", i, iv.Offered)
		}
		if iv.LatencyMinNs > int64(iv.LatencyAvgNs) || int64(iv.LatencyAvgNs) > iv.LatencyMaxNs {
			t.Errorf("interval %d latency min/avg/max %d/%.0f/%d out of order", i, iv.LatencyMinNs, iv.LatencyAvgNs, iv.LatencyMaxNs)
		}
		if i > 0 && iv.LatencyAvgNs <= ivs[i-1].LatencyAvgNs && i < 3 {
			t.Errorf("interval %d mean latency %.0f ns, not above the previous %.0f while the queue fills", i, iv.LatencyAvgNs, ivs[i-1].LatencyAvgNs)
		}
	}
	if off != sent || rx != rcvd || ivs[3].SentSoFar != sent || ivs[3].ReceivedSoFar != rcvd {
		t.Errorf("intervals add up to offered %d received %d; the trial sent %d received %d", off, rx, sent, rcvd)
	}
	if wantEnd := int64(3500*time.Millisecond + spec.Settle); ivs[3].EndNs != wantEnd {
		t.Errorf("final interval ends at %d ns, want %d (traffic and settle)", ivs[3].EndNs, wantEnd)
	}
	if rcvd >= sent {
		t.Errorf("nothing lost above capacity: the test needs loss")
	}
}
