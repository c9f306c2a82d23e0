package wire

import (
	"errors"
	"fmt"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// The agent's TCP data mode (RFC 6349): under the same authenticated
// session, the controller asks the agent to accept Streams TCP connections
// from the controller's own address on a port it opens (TCPSetup, answered
// by Ready with the port), connects them, starts the trial (Start, Started)
// and ends it (Stop, answered by TCPResults). A trial is one of three kinds:
// an RTT probe (the agent echoes one byte per exchange), a transfer to the
// agent (it reads and counts) or a transfer from the agent (it writes, paced
// and capped by its --max-rate, and samples TCP_INFO).

// TCPKind is what a TCP trial does.
type TCPKind string

// TCP trial kinds.
const (
	// TCPRTT: one connection; the agent echoes each byte it reads, at
	// most Probes bytes.
	TCPRTT TCPKind = "rtt"
	// TCPToAgent: the controller writes for Duration on Streams
	// connections; the agent reads, counts, and closes each at its EOF.
	TCPToAgent TCPKind = "to-agent"
	// TCPFromAgent: the agent writes for Duration on Streams connections
	// (paced at its --max-rate, at most its byte budget), then closes its
	// write side; the controller reads.
	TCPFromAgent TCPKind = "from-agent"
)

// Bounds of a TCPSetup, checked when it is decoded, before the agent
// allocates or opens anything. The agent's policy (--max-rate,
// --max-duration) is checked after them.
const (
	// MaxTCPStreams is the most connections of one TCP trial.
	MaxTCPStreams = 64
	// MaxTCPWindow bounds window_bytes: 16 MiB per connection (a larger
	// BDP is split over more connections).
	MaxTCPWindow = 16 << 20
	// MaxTCPWindowTotal bounds streams × window_bytes: 64 MiB, so one
	// trial holds at most 128 MiB of the agent's socket buffers (twice
	// the window each).
	MaxTCPWindowTotal = 64 << 20
	// MaxRTTProbes bounds probes: the bytes the agent echoes.
	MaxRTTProbes = 10000
	// MaxTCPSamples bounds the per-period samples of a trial (duration /
	// sample_every), so TCPResults stays far below MaxBody.
	MaxTCPSamples = 4096
	// MinTCPSampleEvery is the shortest sample period.
	MinTCPSampleEvery = 10 * time.Millisecond
	// RTTTrialLength is how long an RTT trial may last after Start: the
	// controller's exchanges must be done within it.
	RTTTrialLength = 30 * time.Second
	// TCPPayloadShare is the share of the agent's --max-rate (L1 bits)
	// its TCP sender's payload may use: a 1448-byte segment (1500-byte
	// MTU, timestamps) is 94 % of its 1538-byte Ethernet frame on the line.
	TCPPayloadShare = 0.94
)

// TCPSetup asks the agent for one TCP trial, from the controller. Like
// TrialSetup it names no address: the agent accepts connections only from
// the controller's address and sends only on them.
type TCPSetup struct {
	TrialID uint64  `json:"trial_id"`
	Kind    TCPKind `json:"kind"`
	// Streams is the number of connections: 1 for TCPRTT, 1 to
	// MaxTCPStreams otherwise.
	Streams int `json:"streams"`
	// WindowBytes is each connection's TCP window at the agent's end
	// (trials.TCPConfig.WindowBytes): 0 (kernel autotuning) to
	// MaxTCPWindow, and Streams × WindowBytes at most MaxTCPWindowTotal.
	WindowBytes int `json:"window_bytes"`
	// Duration is how long the transfer's sender writes: 0 for TCPRTT,
	// 1 ms to MaxSpan otherwise (--max-duration bounds it further).
	Duration Duration `json:"duration_ns"`
	// Probes is the number of one-byte exchanges of TCPRTT (1 to
	// MaxRTTProbes), 0 otherwise.
	Probes int `json:"probes"`
	// SampleEvery is the period of the agent's TCP_INFO samples when it
	// sends: 0 (1 s) or MinTCPSampleEvery up, at most MaxTCPSamples per
	// Duration.
	SampleEvery Duration `json:"sample_every_ns"`
	// AgentPort is the TCP port the agent listens on: 0 lets it pick,
	// else 1024 or above.
	AgentPort uint16 `json:"agent_port"`
}

// TCPResults is the agent's side of a TCP trial, answering Stop.
type TCPResults struct {
	TrialID uint64 `json:"trial_id"`
	// ReceivedBytes is the payload the agent read (TCPToAgent), and
	// ReceiveSpanNs the time from its first byte to its last, on the
	// agent's clock.
	ReceivedBytes uint64 `json:"received_bytes"`
	ReceiveSpanNs int64  `json:"receive_span_ns"`
	// WrittenBytes is the payload the agent wrote (TCPFromAgent), counted
	// against its byte budget.
	WrittenBytes uint64 `json:"written_bytes"`
	// Capped is set when the agent's --max-rate held the transfer back:
	// its writing or reading waited for the pace (more than 1 % of the
	// time), or the budget ended its writing early. The rate measured is
	// then the agent's cap, not the path's.
	Capped bool `json:"capped"`
	// EchoedBytes is what the agent echoed (TCPRTT).
	EchoedBytes uint64 `json:"echoed_bytes"`
	// Refused counts connections to the trial's port from any address but
	// the controller's: closed unread.
	Refused uint64 `json:"refused"`
	// Send is the agent's sender side (TCPFromAgent): TCP_INFO samples
	// and totals.
	Send trials.TCPRun `json:"send"`
	// TesterLimitReason, when set, says why the agent's side could not run
	// the trial faithfully.
	TesterLimitReason string `json:"tester_limit_reason"`
}

func (*TCPSetup) Type() Type   { return TypeTCPSetup }
func (*TCPResults) Type() Type { return TypeTCPResults }

// Validate checks a TCPSetup against the protocol's bounds; the error names
// the field.
func (m *TCPSetup) Validate() error {
	if m.TrialID == 0 {
		return errors.New("tcp_setup trial_id: must not be zero")
	}
	if m.AgentPort != 0 && m.AgentPort < 1024 {
		return fmt.Errorf("tcp_setup agent_port %d: want 0 (the agent picks) or 1024 and above", m.AgentPort)
	}
	if m.WindowBytes < 0 || m.WindowBytes > MaxTCPWindow {
		return fmt.Errorf("tcp_setup window_bytes %d: want 0 (autotuning) to %d per connection; split a larger window over more streams", m.WindowBytes, MaxTCPWindow)
	}
	if m.SampleEvery != 0 && (m.SampleEvery < int64(MinTCPSampleEvery) || m.SampleEvery > int64(MaxSpan)) {
		return fmt.Errorf("tcp_setup sample_every_ns %d: want 0 (1 s) or %v to %v", m.SampleEvery, MinTCPSampleEvery, MaxSpan)
	}
	switch m.Kind {
	case TCPRTT:
		if m.Streams != 1 {
			return fmt.Errorf("tcp_setup streams %d: an rtt trial has 1 connection", m.Streams)
		}
		if m.Probes < 1 || m.Probes > MaxRTTProbes {
			return fmt.Errorf("tcp_setup probes %d: want 1 to %d", m.Probes, MaxRTTProbes)
		}
		if m.Duration != 0 {
			return fmt.Errorf("tcp_setup duration_ns %d: an rtt trial has none (it lasts at most %v)", m.Duration, RTTTrialLength)
		}
		return nil
	case TCPToAgent, TCPFromAgent:
	default:
		return fmt.Errorf("tcp_setup kind %q: want %q, %q or %q", m.Kind, TCPRTT, TCPToAgent, TCPFromAgent)
	}
	if m.Streams < 1 || m.Streams > MaxTCPStreams {
		return fmt.Errorf("tcp_setup streams %d: want 1 to %d connections", m.Streams, MaxTCPStreams)
	}
	if int64(m.Streams)*int64(m.WindowBytes) > MaxTCPWindowTotal {
		return fmt.Errorf("tcp_setup window_bytes %d × streams %d: %d bytes, above the agent's %d per trial", m.WindowBytes, m.Streams,
			int64(m.Streams)*int64(m.WindowBytes), MaxTCPWindowTotal)
	}
	if m.Probes != 0 {
		return fmt.Errorf("tcp_setup probes %d: only an rtt trial has probes", m.Probes)
	}
	if m.Duration < int64(time.Millisecond) || m.Duration > int64(MaxSpan) {
		return fmt.Errorf("tcp_setup duration_ns %d: want 1 ms to %v", m.Duration, MaxSpan)
	}
	if n := m.Duration / TCPSampleEvery(*m).Nanoseconds(); n > MaxTCPSamples {
		return fmt.Errorf("tcp_setup sample_every_ns %d: %d samples over duration_ns %d, above the limit of %d; sample less often", m.SampleEvery, n, m.Duration, MaxTCPSamples)
	}
	return nil
}

// TCPSampleEvery is a setup's sample period: SampleEvery, or 1 s.
func TCPSampleEvery(s TCPSetup) time.Duration {
	if s.SampleEvery <= 0 {
		return time.Second
	}
	return time.Duration(s.SampleEvery)
}

// TCPLength is how long a TCP trial lasts after Start: its Duration, or
// RTTTrialLength for an RTT probe.
func TCPLength(s TCPSetup) time.Duration {
	if s.Kind == TCPRTT {
		return RTTTrialLength
	}
	return time.Duration(s.Duration)
}

// TCPBudget is the most payload, in bytes, an agent capped at maxRateBps (L1
// bits per second) writes in a TCPFromAgent trial of duration d: its
// payload share of the cap over d.
func TCPBudget(maxRateBps float64, d time.Duration) uint64 {
	b := maxRateBps / 8 * TCPPayloadShare * d.Seconds()
	if !(b > 0) {
		return 0
	}
	if b >= 1<<63 {
		return 1 << 63
	}
	return uint64(b)
}

// Validate checks a TCPResults; the error names the field.
func (m *TCPResults) Validate() error {
	if err := nonZeroID("tcp_results", m.TrialID); err != nil {
		return err
	}
	if m.ReceiveSpanNs < 0 {
		return fmt.Errorf("tcp_results receive_span_ns %d: must not be negative", m.ReceiveSpanNs)
	}
	r := m.Send
	if len(r.Samples) > MaxTCPSamples+2 {
		return fmt.Errorf("tcp_results send samples: %d, above the limit of %d", len(r.Samples), MaxTCPSamples+2)
	}
	if r.Streams < 0 || r.Streams > MaxTCPStreams || r.WindowBytes < 0 || r.MSSBytes < 0 || r.MeanRTTNs < 0 {
		return errors.New("tcp_results send: streams, window_bytes, mss_bytes and mean_rtt_ns must be in range")
	}
	if !Finite(r.Seconds) || !Finite(r.Bps) || r.Seconds < 0 || r.Bps < 0 {
		return errors.New("tcp_results send: transfer_s and bps must be finite and not negative")
	}
	for i, s := range r.Samples {
		if !Finite(s.AtS) || !Finite(s.Bps) {
			return fmt.Errorf("tcp_results send sample %d: values must be finite", i)
		}
	}
	return nil
}
