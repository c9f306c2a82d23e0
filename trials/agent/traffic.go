package agent

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// Traffic is the agent's traffic engine: port B of a trial. The agent calls
// StartReceive at TrialSetup, StartSend at Start (only when the trial has
// B->A streams), and Stop on both at the controller's Stop, when the
// controller is lost, or when the trial's hard deadline passes. The UDP
// transport of package trials implements it; agenttest.Traffic is a fake.
//
// The agent has already checked the trial against its policy. An
// implementation must still never send to any address but the one it is
// given, never faster than Trial.MaxSendFPS, and never after
// Trial.Deadline.
type Traffic interface {
	// StartReceive starts counting the trial's A->B streams on
	// Trial.Listen (port zero: pick one), from Trial.Peer's address only. In round-trip latency mode it
	// also reflects up to Trial.ReflectFPS frames per second to reflectTo;
	// reflectTo is the zero AddrPort when nothing is to be reflected.
	StartReceive(ctx context.Context, t Trial, reflectTo netip.AddrPort) (Receiver, error)
	// StartSend starts sending the trial's B->A streams to dst and returns
	// at once; the sender stops by itself at the end of the trial, at
	// ctx's cancellation, or at Stop, whichever comes first.
	StartSend(ctx context.Context, t Trial, dst netip.AddrPort) (Sender, error)
}

// Receiver counts one trial's A->B streams.
type Receiver interface {
	// Port is the UDP port it receives on.
	Port() uint16
	// Stop stops receiving (and reflecting) and returns the counters.
	// sent holds the frames the controller sent per A->B stream ID (from
	// its Stop message; nil when the trial ended without one), from which
	// the receiver computes Lost and LastLossNs. Stop is called once.
	Stop(sent map[uint16]uint64) (RecvResult, error)
}

// RecvResult is what a Receiver counted.
type RecvResult struct {
	// Streams holds one result per A->B stream with the receive counters
	// (Received, Lost, Reordered, Duplicate, Late, KernelDrops, LastLossNs,
	// and Latency and TaggedLatencyNs in one-way mode); the agent matches
	// them to the Spec by ID.
	Streams []trials.StreamResult
	// Reflected counts frames reflected to the controller.
	Reflected uint64
	// Paths are the kernel receive paths used.
	Paths trials.Paths
}

// Sender sends one trial's B->A streams.
type Sender interface {
	// Stop stops sending, if it has not stopped already, and returns the
	// counters. Stop is called once and must return within 100 ms.
	Stop() (SendResult, error)
}

// SendResult is what a Sender sent.
type SendResult struct {
	// Streams holds one result per B->A stream with the send counters
	// (Sent, IntendedFPS, OfferedFPS, TxSeconds, TaggedLatencyNs -1);
	// the agent matches them to the Spec by ID.
	Streams []trials.StreamResult
	// TesterLimitReason, when not empty, says why the sender fell short
	// of the intended load (the trial is then tester-limited).
	TesterLimitReason string
	// TesterLimitTransient says every reason is a stall of this host, not
	// a ceiling (trials.Result.TesterLimitTransient).
	TesterLimitTransient bool
	// Paths are the kernel transmit paths used.
	Paths trials.Paths
}

// Trial is what the agent hands its Traffic for one trial.
type Trial struct {
	// ID is the controller's trial id.
	ID uint64
	// Spec is the whole trial; port B receives the A->B streams and sends
	// the B->A ones.
	Spec trials.Spec
	// Latency is the trial's latency mode.
	Latency LatencyMode
	// Listen is the agent's receive address: its local address on the
	// control connection and TrialSetup.AgentPort (zero: any).
	Listen netip.AddrPort
	// Peer is the controller's address: its IP is the control
	// connection's peer, its port TrialSetup.ControllerPort. The only
	// destination of anything the agent sends.
	Peer netip.AddrPort
	// ReflectFPS caps reflected frames, in frames per second.
	ReflectFPS float64
	// MaxSendFPS is the agent's cap on everything it sends in this trial
	// (B->A streams and reflected frames together), in frames per second,
	// from --max-rate at this frame size: defence in depth for the
	// transport to enforce too.
	MaxSendFPS float64
	// Deadline is when sending must have stopped, whatever happens.
	Deadline time.Time
}

// Streams returns the trial's streams sent by port dir (AtoB: the
// controller's, BtoA: the agent's).
func (t Trial) Streams(dir trials.Direction) []trials.Stream {
	var s []trials.Stream
	for _, st := range t.Spec.Streams {
		if st.Direction == dir {
			s = append(s, st)
		}
	}
	return s
}

// Policy is what an agent allows. The zero value allows nothing: Check
// refuses every trial until MaxRateBps and MaxDuration are set.
type Policy struct {
	// MaxRateBps caps what the agent sends, in L1 bits per second, summed
	// over its B->A streams and reflected frames (--max-rate).
	MaxRateBps float64
	// MaxDuration caps one trial: learning, traffic and settle wait
	// (--max-duration).
	MaxDuration time.Duration
	// ClockSync is the agent's declared clock synchronization
	// (--clock-sync); one-way latency needs ClockPTP.
	ClockSync ClockSync
}

// MinControllerPort is the lowest UDP port the agent sends to: test traffic
// never goes to a well-known service port on the controller's host.
const MinControllerPort = 1024

// Check refuses a setup that breaks the policy, with an error that names the
// setting and the fix. The setup's own fields are valid (Decode checked).
func (p Policy) Check(s wire.TrialSetup) error {
	if p.MaxRateBps <= 0 || p.MaxDuration <= 0 {
		return fmt.Errorf("agent policy: max rate %g bit/s and max duration %v must be set", p.MaxRateBps, p.MaxDuration)
	}
	sp := s.Spec
	sends := wire.SendFPS(s) > 0 || len((Trial{Spec: sp}).Streams(trials.BtoA)) > 0
	if sends && sp.RateFPS == 0 {
		return fmt.Errorf("trial %d rate_fps 0 (as fast as possible): the agent sends only at an explicit rate; give the burst a rate at or below the agent's --max-rate %s",
			s.TrialID, fmtBps(p.MaxRateBps))
	}
	if bps := framing.L1Bps(wire.SendFPS(s), sp.FrameSize); bps > p.MaxRateBps*(1+1e-9) {
		return fmt.Errorf("trial %d asks the agent to send %s (%.0f fps of %d-byte frames: B->A streams and reflected frames), above its --max-rate %s; "+
			"lower the rate, or restart the agent with a higher --max-rate if the path can take it",
			s.TrialID, fmtBps(bps), wire.SendFPS(s), sp.FrameSize, fmtBps(p.MaxRateBps))
	}
	// Learning datagrams count against the cap too: they are paced at the
	// cap (no faster than MaxSendFPS), and must fit the learning wait.
	if n := wire.LearningFrames(s); n > 0 {
		capFPS := p.MaxSendFPS(sp.FrameSize)
		if need := time.Duration(float64(n-1) / capFPS * float64(time.Second)); need >= wire.LearningWindow(s) {
			return fmt.Errorf("trial %d asks the agent to send %d learning frames of %d bytes (one per B->A flow) within its %v learning wait, above its --max-rate %s (%.0f fps); "+
				"use fewer flows, a longer learning wait, or restart the agent with a higher --max-rate",
				s.TrialID, n, sp.FrameSize, wire.LearningWindow(s), fmtBps(p.MaxRateBps), capFPS)
		}
	}
	if d := wire.TrialLength(s); d > p.MaxDuration {
		return fmt.Errorf("trial %d lasts %v (learning, traffic and settle wait), above the agent's --max-duration %v; shorten the trial or restart the agent with a longer --max-duration",
			s.TrialID, d, p.MaxDuration)
	}
	if sends && s.ControllerPort < MinControllerPort {
		return fmt.Errorf("trial %d controller_port %d: the agent sends only to UDP ports %d and above; pick a port from %d up",
			s.TrialID, s.ControllerPort, MinControllerPort, MinControllerPort)
	}
	if s.AgentPort != 0 && s.AgentPort < MinControllerPort {
		return fmt.Errorf("trial %d agent_port %d: the agent receives only on UDP ports %d and above (or 0 for any)", s.TrialID, s.AgentPort, MinControllerPort)
	}
	if s.Latency == LatencyOneWay && p.ClockSync != ClockPTP {
		return fmt.Errorf("trial %d latency one-way: the agent's clock is not declared synchronized; measure round trip, or start the agent with --clock-sync ptp when both hosts run PTP",
			s.TrialID)
	}
	return nil
}

// MaxSendFPS is the policy's rate cap at a frame size, in frames per second.
func (p Policy) MaxSendFPS(frameSize int) float64 {
	return p.MaxRateBps / (float64(frameSize+framing.L1Overhead) * 8)
}

func fmtBps(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.4g Gbit/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.4g Mbit/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.4g kbit/s", bps/1e3)
	}
	return fmt.Sprintf("%.4g bit/s", bps)
}
