package trials

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// Remote is port B of a two-host trial when it runs on another host and is
// driven over a control channel (package trials/agent's Client, talking to
// an agent). A RemoteEngine runs port A on this host and drives port B
// through a Remote, one trial at a time: Setup, then Start, then Stop.
type Remote interface {
	// Addr is port B's address: port A sends its A->B streams there and
	// counts only frames that come from it.
	Addr() netip.Addr
	// Setup readies port B for trial t before any traffic: from its
	// answer on, port B counts t's A->B streams on RemoteReady.Port.
	// An error here means the trial never started.
	Setup(ctx context.Context, t RemoteTrial) (RemoteReady, error)
	// Start starts port B's B->A streams of trial id.
	Start(ctx context.Context, id uint64) error
	// Stop ends trial id on port B and returns its counters. sent holds
	// port A's send counters of the A->B streams (ID and Sent, in Spec
	// order; empty when there are none), from which port B counts Lost.
	Stop(ctx context.Context, id uint64, sent []StreamResult) (RemoteResult, error)
	// Done is closed when port B is lost; Err then says why. A trial
	// running then fails with Err, and Stop is not called.
	Done() <-chan struct{}
	Err() error
}

// RemoteTrial is what port B is told of a trial at Setup.
type RemoteTrial struct {
	// ID is the trial's id: 1, 2, … per RemoteEngine.
	ID   uint64
	Spec Spec
	// Port is port A's UDP receive port: B->A streams and reflected
	// frames go there.
	Port uint16
	// RoundTrip asks port B to reflect received A->B frames back to
	// Port, so port A times their round trip (when the engine's latency
	// is not one way and the trial has A->B streams).
	RoundTrip bool
}

// RemoteReady is port B's answer to Setup.
type RemoteReady struct {
	// Port is the UDP port port B receives the A->B streams on.
	Port uint16
	// RunID is the signature run id of the trial's frames on both hosts
	// (1 to 255).
	RunID uint8
	// Reflect says port B reflects A->B frames (RemoteTrial.RoundTrip
	// granted; its policy may leave no room for them).
	Reflect bool
	// Length is how long port B's part of the trial lasts from Start
	// (learning, traffic, settle wait): port A waits that long before it
	// settles and calls Stop.
	Length time.Duration
}

// RemoteResult is port B's counters of a trial.
type RemoteResult struct {
	// Streams holds one result per Spec stream: for A->B streams the
	// receive counters (Received, Reordered, Duplicate, Late, KernelDrops,
	// LastLossNs; Latency, TaggedLatencyNs and Trend in one-way mode), for
	// B->A streams the send counters (Sent, IntendedFPS, OfferedFPS,
	// TxSeconds, MaxLagNs and the catch-up figures).
	Streams []StreamResult
	// TesterLimited and TesterLimitReason say port B could not run the
	// trial faithfully (its generator fell behind, its socket dropped
	// frames).
	TesterLimited     bool
	TesterLimitReason string
	// TesterLimitTransient says every reason is a stall of port B's host
	// (Result.TesterLimitTransient): the trial may be run again.
	TesterLimitTransient bool
	// Reflected counts the frames port B reflected to port A.
	Reflected uint64
	// Paths are port B's kernel paths.
	Paths Paths
}

// RemoteConfig configures a RemoteEngine: port A's sockets here. The zero
// value of every optional field is a documented default.
type RemoteConfig struct {
	// Local is port A: the receive socket binds to Addr (or Addr6 for
	// IPv6 trials) and Port (zero: DefaultUDPPort), A->B streams leave
	// from that address, in Namespace. The address must be the one port
	// B sends to.
	Local UDPPortConfig
	// SocketBuffer is every socket's send and receive buffer, in bytes;
	// zero means DefaultUDPSocketBuffer.
	SocketBuffer int
	// Batch caps the datagrams per sendmmsg call; zero means 64.
	Batch int
	// TesterLimitTolerance and MaxLag mean what they mean in Config.
	TesterLimitTolerance float64
	MaxLag               time.Duration
	// OneWay says port B times the A->B frames it receives and port A the
	// B->A ones (the hosts' clocks are synchronized). Otherwise A->B
	// latency is the round trip of frames port B reflects, and B->A
	// streams carry none.
	OneWay bool
}

// mergeRemote combines port A's side of a two-host trial with port B's
// RemoteResult into the trial's Result.
//
// local has one StreamResult per Spec stream: for A->B streams the send
// counters (Sent, IntendedFPS, OfferedFPS, TxSeconds) and, in round-trip
// mode, the round-trip latency timed on reflected frames; for B->A streams
// the receive counters. A->B streams take their receive counters (Received,
// Reordered, Duplicate, Late, KernelDrops, LastLossNs, the latency Trend;
// one way also Latency) from port B, B->A streams their send counters from
// port B; Lost is recomputed as Sent − Received.
//
// Latency: one way (oneWay) each receiver's latency is kept (port B's for
// A->B, port A's for B->A). Otherwise A->B streams keep port A's round-trip
// latency and B->A streams carry none (Count 0, TaggedLatencyNs −1): one-way
// values across unsynchronized clocks mean nothing. A trial either side
// marks tester-limited is tester-limited, port B's reasons prefixed with
// "agent: ".
func mergeRemote(oneWay bool, id uint64, local Result, remote RemoteResult) (Result, error) {
	out := local
	out.Streams = nil
	find := func(rs []StreamResult, id uint16) (StreamResult, bool) {
		for _, r := range rs {
			if r.ID == id {
				return r, true
			}
		}
		return StreamResult{}, false
	}
	for _, s := range local.Spec.Streams {
		l, ok := find(local.Streams, s.ID)
		if !ok {
			return out, fmt.Errorf("merge trial %d: stream %d: no counters from the controller's side", id, s.ID)
		}
		r, ok := find(remote.Streams, s.ID)
		if !ok {
			return out, fmt.Errorf("merge trial %d: stream %d: no counters from the agent", id, s.ID)
		}
		m := l
		m.ID, m.Direction = s.ID, s.Direction
		switch s.Direction {
		case AtoB:
			m.Received, m.Reordered, m.Duplicate, m.Late = r.Received, r.Reordered, r.Duplicate, r.Late
			m.KernelDrops, m.LastLossNs = r.KernelDrops, r.LastLossNs
			if oneWay {
				m.Latency, m.TaggedLatencyNs = r.Latency, r.TaggedLatencyNs
			}
			// The latency trend, which the sustained-rate verdict
			// (Result.Sustained) reads, is port B's either way: across
			// clocks not declared synchronized it is relative to its own
			// base (RemoteReceive.UnsyncedClock), and it times every
			// frame on the A->B path alone, where the round trip of
			// reflected frames is a sample (0.2 % of a bidirectional
			// trial's rate: 24 frames a second at 12 kfps) that crosses
			// the B->A queue too. With that sample alone CI on
			// 2026-12-02 passed a 2 s bidirectional trial 1.4 % above
			// the DUT's rate, whose A->B queue grew by some 20 ms.
			if r.Trend != nil {
				m.Trend = r.Trend
			}
		case BtoA:
			m.Sent, m.IntendedFPS, m.OfferedFPS, m.TxSeconds = r.Sent, r.IntendedFPS, r.OfferedFPS, r.TxSeconds
			if !oneWay {
				m.Latency, m.TaggedLatencyNs = LatencySummary{}, -1
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

// streamsOf is spec's streams of direction d, in Spec order.
func streamsOf(spec Spec, d Direction) []Stream {
	var out []Stream
	for _, s := range spec.Streams {
		if s.Direction == d {
			out = append(out, s)
		}
	}
	return out
}
