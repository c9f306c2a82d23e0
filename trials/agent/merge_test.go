package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

func TestMergeResults(t *testing.T) {
	spec := trials.Spec{FrameSize: 64, RateFPS: 1000, Duration: time.Second,
		Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}}}
	rtt := trials.LatencySummary{Count: 10, MinNs: 2e6, MeanNs: 2.5e6, MaxNs: 3e6}
	oneWayAgent := trials.LatencySummary{Count: 990, MinNs: 1e6, MeanNs: 1.2e6, MaxNs: 1.5e6}
	oneWayLocal := trials.LatencySummary{Count: 1000, MinNs: 1.1e6, MeanNs: 1.3e6, MaxNs: 1.6e6}
	// The agent's latency trend of A->B: its queue grew through the trial.
	growing := &trials.LatencyTrend{BinNs: 1e7, SlopeNsPerS: 4e7, SlopeSENsPerS: 1e6, RiseNs: 4e7, StepNs: 3e7, LateSlopeNsPerS: 4e7, SpanS: 1}
	local := trials.Result{Spec: spec, Paths: trials.Paths{Transport: "udp"}, Streams: []trials.StreamResult{
		// A->B: what the controller sent, and the round trip of reflected frames.
		{ID: 1, Direction: trials.AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Latency: rtt, TaggedLatencyNs: 2e6, LastLossNs: -1},
		// B->A: what the controller received from the agent.
		{ID: 2, Direction: trials.BtoA, Received: 1000, Reordered: 1, Latency: oneWayLocal, TaggedLatencyNs: 1e6, LastLossNs: -1},
	}}
	remote := wire.Results{TrialID: 4, Streams: []trials.StreamResult{
		{ID: 2, Direction: trials.BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, TaggedLatencyNs: -1, LastLossNs: -1},
		{ID: 1, Direction: trials.AtoB, Received: 990, Lost: 10, Duplicate: 2, Late: 1, KernelDrops: 0, Latency: oneWayAgent, TaggedLatencyNs: 1e6, LastLossNs: 5e8, Trend: growing},
	}}
	tests := []struct {
		name string
		mode LatencyMode
		want []trials.StreamResult
	}{
		{name: "round trip", mode: LatencyRoundTrip, want: []trials.StreamResult{
			{ID: 1, Direction: trials.AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Received: 990, Lost: 10, Duplicate: 2, Late: 1,
				Latency: rtt, TaggedLatencyNs: 2e6, LastLossNs: 5e8},
			{ID: 2, Direction: trials.BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, Received: 1000, Reordered: 1,
				TaggedLatencyNs: -1, LastLossNs: -1},
		}},
		{name: "one way", mode: LatencyOneWay, want: []trials.StreamResult{
			{ID: 1, Direction: trials.AtoB, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 999, TxSeconds: 1, Received: 990, Lost: 10, Duplicate: 2, Late: 1,
				Latency: oneWayAgent, TaggedLatencyNs: 1e6, LastLossNs: 5e8, Trend: growing},
			{ID: 2, Direction: trials.BtoA, Sent: 1000, IntendedFPS: 1000, OfferedFPS: 998, TxSeconds: 1.001, Received: 1000, Reordered: 1,
				Latency: oneWayLocal, TaggedLatencyNs: 1e6, LastLossNs: -1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergeResults(tc.mode, local, remote)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got.Streams); d != "" {
				t.Errorf("streams (-want +got):\n%s", d)
			}
			if got.Paths.Transport != "udp" || got.TesterLimited {
				t.Errorf("paths %+v, tester-limited %v", got.Paths, got.TesterLimited)
			}
			// One way, the agent's trend reaches the sustained-rate verdict.
			if ok, _ := got.Sustained(); ok != (tc.mode != LatencyOneWay) {
				t.Errorf("sustained %v, want %v: the agent's A->B queue grew", ok, tc.mode != LatencyOneWay)
			}
		})
	}
	t.Run("tester-limited agent", func(t *testing.T) {
		r := remote
		r.TesterLimited, r.TesterLimitReason = true, "stream 2: generator offered 800 fps"
		l := local
		l.TesterLimited, l.TesterLimitReason = true, "port A: receiver dropped 3 frames"
		got, err := mergeResults(LatencyRoundTrip, l, r)
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
		if _, err := mergeResults(LatencyRoundTrip, local, r); err == nil || !strings.Contains(err.Error(), "stream 1: no counters from the agent") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("more received than sent", func(t *testing.T) {
		r := remote
		r.Streams = append([]trials.StreamResult(nil), r.Streams...)
		r.Streams[1].Received = 1005
		got, _ := mergeResults(LatencyRoundTrip, local, r)
		if s := got.Streams[0]; s.Received != 1000 || s.Lost != 0 {
			t.Errorf("received %d lost %d, want 1000 and 0", s.Received, s.Lost)
		}
	})
}
