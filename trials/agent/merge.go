package agent

import (
	"fmt"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// mergeResults combines the controller's side of a trial with the agent's
// Results into the trial's trials.Result, for a Tester that pairs a local
// UDP port A with a remote agent as port B.
//
// local has one StreamResult per Spec stream: for A->B streams the send
// counters (Sent, IntendedFPS, OfferedFPS, TxSeconds) and, in round-trip
// mode, the round-trip latency timed on reflected frames; for B->A streams
// the receive counters. remote is the agent's Results for the same trial.
// A->B streams take their receive counters (Received, Reordered, Duplicate,
// Late, KernelDrops, LastLossNs; one way also Latency and the latency
// Trend) from the agent, B->A streams their send
// counters from the agent; Lost is recomputed as Sent − Received.
//
// Latency: in LatencyOneWay mode each receiver's latency is kept (the agent's
// for A->B, the controller's for B->A). In LatencyRoundTrip mode A->B
// streams keep the controller's round-trip latency and B->A streams carry
// none (Count 0, TaggedLatencyNs −1): one-way values across unsynchronized
// clocks mean nothing. A trial either side marks tester-limited is
// tester-limited, the agent's reasons prefixed with "agent: ".
func mergeResults(mode LatencyMode, local trials.Result, remote wire.Results) (trials.Result, error) {
	out := local
	out.Streams = nil
	find := func(rs []trials.StreamResult, id uint16) (trials.StreamResult, bool) {
		for _, r := range rs {
			if r.ID == id {
				return r, true
			}
		}
		return trials.StreamResult{}, false
	}
	for _, s := range local.Spec.Streams {
		l, ok := find(local.Streams, s.ID)
		if !ok {
			return out, fmt.Errorf("merge trial %d: stream %d: no counters from the controller's side", remote.TrialID, s.ID)
		}
		r, ok := find(remote.Streams, s.ID)
		if !ok {
			return out, fmt.Errorf("merge trial %d: stream %d: no counters from the agent", remote.TrialID, s.ID)
		}
		m := l
		m.ID, m.Direction = s.ID, s.Direction
		switch s.Direction {
		case trials.AtoB:
			m.Received, m.Reordered, m.Duplicate, m.Late = r.Received, r.Reordered, r.Duplicate, r.Late
			m.KernelDrops, m.LastLossNs = r.KernelDrops, r.LastLossNs
			if mode == LatencyOneWay {
				// The latency trend too: the sustained-rate verdict
				// (trials.Result.Sustained) reads it, and without it a
				// queue that grew through an A->B trial went unseen.
				m.Latency, m.TaggedLatencyNs, m.Trend = r.Latency, r.TaggedLatencyNs, r.Trend
			}
		case trials.BtoA:
			m.Sent, m.IntendedFPS, m.OfferedFPS, m.TxSeconds = r.Sent, r.IntendedFPS, r.OfferedFPS, r.TxSeconds
			if mode != LatencyOneWay {
				m.Latency, m.TaggedLatencyNs = trials.LatencySummary{}, -1
			}
		}
		m.Received = min(m.Received, m.Sent)
		m.Lost = m.Sent - m.Received
		out.Streams = append(out.Streams, m)
	}
	if remote.TesterLimited {
		reason := "agent: " + remote.TesterLimitReason
		if out.TesterLimited && out.TesterLimitReason != "" {
			reason = out.TesterLimitReason + "; " + reason
		}
		out.TesterLimited, out.TesterLimitReason = true, reason
	}
	return out, nil
}
