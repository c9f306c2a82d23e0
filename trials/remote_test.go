package trials

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMergeRemote(t *testing.T) {
	spec := Spec{FrameSize: 64, RateFPS: 1000, Duration: time.Second,
		Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}}
	rtt := LatencySummary{Count: 10, MinNs: 2e6, MeanNs: 2.5e6, MaxNs: 3e6}
	oneWayAgent := LatencySummary{Count: 990, MinNs: 1e6, MeanNs: 1.2e6, MaxNs: 1.5e6}
	oneWayLocal := LatencySummary{Count: 1000, MinNs: 1.1e6, MeanNs: 1.3e6, MaxNs: 1.6e6}
	// The agent's latency trend of A->B: its queue grew through the trial.
	growing := &LatencyTrend{BinNs: 1e7, SlopeNsPerS: 4e7, SlopeSENsPerS: 1e6, RiseNs: 4e7, StepNs: 3e7, LateSlopeNsPerS: 4e7, SpanS: 1}
	local := Result{Spec: spec, Paths: Paths{Transport: "udp"}, Streams: []StreamResult{
		// A->B: what the controller sent, and the round trip of reflected frames.
		{ID: 1, Direction: AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Latency: rtt, TaggedLatencyNs: 2e6, LastLossNs: -1},
		// B->A: what the controller received from the agent.
		{ID: 2, Direction: BtoA, Received: 1000, Reordered: 1, Latency: oneWayLocal, TaggedLatencyNs: 1e6, LastLossNs: -1},
	}}
	remote := RemoteResult{Streams: []StreamResult{
		{ID: 2, Direction: BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, TaggedLatencyNs: -1, LastLossNs: -1},
		{ID: 1, Direction: AtoB, Received: 990, Lost: 10, Duplicate: 2, Late: 1, KernelDrops: 0, Latency: oneWayAgent, TaggedLatencyNs: 1e6, LastLossNs: 5e8, Trend: growing},
	}}
	tests := []struct {
		name   string
		oneWay bool
		want   []StreamResult
	}{
		{name: "round trip", oneWay: false, want: []StreamResult{
			{ID: 1, Direction: AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Received: 990, Lost: 10, Duplicate: 2, Late: 1,
				Latency: rtt, TaggedLatencyNs: 2e6, LastLossNs: 5e8, Trend: growing},
			{ID: 2, Direction: BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, Received: 1000, Reordered: 1,
				TaggedLatencyNs: -1, LastLossNs: -1},
		}},
		{name: "one way", oneWay: true, want: []StreamResult{
			{ID: 1, Direction: AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Received: 990, Lost: 10, Duplicate: 2, Late: 1,
				Latency: oneWayAgent, TaggedLatencyNs: 1e6, LastLossNs: 5e8, Trend: growing},
			{ID: 2, Direction: BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, Received: 1000, Reordered: 1,
				Latency: oneWayLocal, TaggedLatencyNs: 1e6, LastLossNs: -1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergeRemote(tc.oneWay, 4, local, remote)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.Streams); d != "" {
				t.Errorf("streams (-want +got):\n%s", d)
			}
			if got.Paths.Transport != "udp" || got.TesterLimited {
				t.Errorf("paths %+v, tester-limited %v", got.Paths, got.TesterLimited)
			}
			// Either way, the agent's trend reaches the sustained-rate
			// verdict.
			if ok, _ := got.Sustained(); ok {
				t.Errorf("sustained, want not: the agent's A->B queue grew")
			}
		})
	}
	// An agent that sent no trend for A->B leaves the round trip's.
	t.Run("round trip, no agent trend", func(t *testing.T) {
		l, r := local, remote
		l.Streams = slices.Clone(local.Streams)
		l.Streams[0].Trend = growing
		r.Streams = slices.Clone(remote.Streams)
		r.Streams[1].Trend = nil
		got, err := mergeRemote(false, 4, l, r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Streams[0].Trend != growing {
			t.Errorf("A->B trend %+v, want the round trip's", got.Streams[0].Trend)
		}
	})
	t.Run("tester-limited agent", func(t *testing.T) {
		r := remote
		r.TesterLimited, r.TesterLimitReason = true, "stream 2: generator offered 800 fps"
		l := local
		l.TesterLimited, l.TesterLimitReason = true, "port A: receiver dropped 3 frames"
		got, err := mergeRemote(false, 4, l, r)
		if err != nil {
			t.Fatal(err)
		}
		if want := "port A: receiver dropped 3 frames; agent: stream 2: generator offered 800 fps"; !got.TesterLimited || got.TesterLimitReason != want {
			t.Errorf("tester-limited %v %q, want %q", got.TesterLimited, got.TesterLimitReason, want)
		}
	})
	t.Run("missing stream", func(t *testing.T) {
		r := remote
		r.Streams = r.Streams[:1]
		if _, err := mergeRemote(false, 4, local, r); err == nil || !strings.Contains(err.Error(), "stream 1: no counters from the agent") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("more received than sent", func(t *testing.T) {
		r := remote
		r.Streams = append([]StreamResult(nil), r.Streams...)
		r.Streams[1].Received = 1005
		got, _ := mergeRemote(false, 4, local, r)
		if s := got.Streams[0]; s.Received != 1000 || s.Lost != 0 {
			t.Errorf("received %d lost %d, want 1000 and 0", s.Received, s.Lost)
		}
	})
}
