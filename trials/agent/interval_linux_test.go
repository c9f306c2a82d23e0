package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// TestTesterIntervals: a two-host trial through the agent (on loopback)
// reports Spec.OnInterval once per second: Partial intervals with this
// host's traffic (what it sent A->B, what it received B->A; never the
// agent's reflections), then a whole final one; the intervals sum to the
// result's Sent and Received in each direction.
func TestTesterIntervals(t *testing.T) {
	_, _, tr := udpAgent(t, 42566)
	for _, tc := range []struct {
		name    string
		streams []trials.Stream
	}{
		{"forward", []trials.Stream{{ID: 1, Direction: trials.AtoB}}},
		{"reverse", []trials.Stream{{ID: 2, Direction: trials.BtoA}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var ivs []trials.Interval
			spec := trials.Spec{FrameSize: 256, Streams: tc.streams, RateFPS: 3000, Duration: 2200 * time.Millisecond,
				Settle: 50 * time.Millisecond, TagAfter: time.Second,
				OnInterval: func(iv trials.Interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() }}
			res, err := tr.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			t.Logf("result %+v\nintervals %+v", res.Streams, ivs)
			if len(ivs) != trials.Intervals(spec) {
				t.Fatalf("%d intervals, want %d", len(ivs), trials.Intervals(spec))
			}
			var offered, received, sent, got uint64
			for _, s := range res.Streams {
				sent, got = sent+s.Sent, got+s.Received
			}
			for i, iv := range ivs {
				offered, received = offered+iv.Offered, received+iv.Received
				last := i == len(ivs)-1
				if iv.Final != last || iv.Partial == last {
					t.Errorf("interval %d: final %v partial %v", i, iv.Final, iv.Partial)
				}
				if last {
					continue
				}
				// This host sends the A->B streams and receives the
				// B->A ones: what it sees in a second of traffic.
				if forward := tc.streams[0].Direction == trials.AtoB; forward && (iv.Offered == 0 || iv.Received != 0) ||
					!forward && (iv.Offered != 0 || iv.Received == 0) {
					t.Errorf("interval %d (%s): offered %d received %d", i, tc.name, iv.Offered, iv.Received)
				}
			}
			if offered != sent || received != got {
				t.Errorf("intervals sum to %d offered, %d received; the trial sent %d, received %d", offered, received, sent, got)
			}
		})
	}
}
