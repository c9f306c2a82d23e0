package trials

import (
	"context"
	"net/netip"
	"time"
)

// RemotePort is port B of a two-host trial on the far host: the UDP
// sockets with which the host at the other end of a RemoteEngine (the
// agent of package trials/agent) counts the trial's A->B streams,
// reflecting some back for round-trip latency, and sends its B->A streams,
// to and from port A's address only. The zero value of every field is a
// documented default.
type RemotePort struct {
	// Namespace is the network namespace the sockets are opened in (as
	// under /run/netns; needs root). Empty means the caller's namespace.
	Namespace string
	// SocketBuffer is every socket's send and receive buffer, in bytes;
	// zero means DefaultUDPSocketBuffer.
	SocketBuffer int
	// Batch caps the datagrams per sendmmsg call; zero means 64.
	Batch int
	// TesterLimitTolerance and MaxLag mean what they mean in Config.
	TesterLimitTolerance float64
	MaxLag               time.Duration
}

// RemoteReceive says where a RemoteReceiver listens, whom it hears and
// where it reflects.
type RemoteReceive struct {
	// Listen is the address the receive socket binds to; port zero picks
	// a free port (RemoteReceiver.Port says which).
	Listen netip.AddrPort
	// From, when valid, is the only source address whose datagrams are
	// counted or reflected; the kernel drops the others before they are
	// queued.
	From netip.Addr
	// Reflect, when valid, is where received test frames are sent back
	// unchanged (same signature, same transmit stamp), from the receive
	// socket, so port A times their round trip: at most ReflectFPS frames
	// per second (a token bucket holding 50 ms of them, at least one).
	Reflect    netip.AddrPort
	ReflectFPS float64
	// UnsyncedClock says the sender's clock is not declared synchronized
	// with this host's: the streams' latency trends (what the
	// sustained-rate verdict reads) are then relative to their own base,
	// free of the clocks' offset (LatencyTrend).
	UnsyncedClock bool
}

// RemoteSend says where a RemoteSender sends and within which limits.
type RemoteSend struct {
	// Src is the local source address; the zero Addr lets the kernel
	// choose it.
	Src netip.Addr
	// Dst is the only destination: every send socket is connected to it,
	// and the sender checks the connection (getpeername) before the first
	// frame.
	Dst netip.AddrPort
	// MaxFPS caps the streams' summed rate, learning datagrams included,
	// in frames per second; zero means no cap. A trial above it is
	// refused.
	MaxFPS float64
	// Deadline, when set, is when sending stops whatever the pacer says.
	Deadline time.Time
}

// Receive starts counting the A->B streams of spec, whose frames carry run
// id runID, until Stop. It refuses, before it opens anything, a frame size
// the local interface cannot carry and flows beyond the bound.
func (p RemotePort) Receive(spec Spec, runID uint8, opt RemoteReceive) (*RemoteReceiver, error) {
	r, err := startUDPReceive(p, spec, runID, streamsOf(spec, AtoB), opt)
	if err != nil {
		return nil, err
	}
	return &RemoteReceiver{r}, nil
}

// Send opens one connected socket per flow of each B->A stream of spec,
// sends one learning datagram per flow, and starts sending the streams
// (after spec.Learning, at least 20 ms) with run id runID. It returns at
// once; the sender stops by itself at the end of the trial, at ctx's end,
// at the deadline or at Stop.
func (p RemotePort) Send(ctx context.Context, spec Spec, runID uint8, opt RemoteSend) (*RemoteSender, error) {
	s, err := startUDPSend(ctx, p, spec, runID, streamsOf(spec, BtoA), opt)
	if err != nil {
		return nil, err
	}
	return &RemoteSender{s}, nil
}

// RemoteReceiver is port B's running receive half of one trial.
type RemoteReceiver struct{ r *udpReceive }

// Port is the UDP port the socket is bound to.
func (r *RemoteReceiver) Port() uint16 { return r.r.Port() }

// Stop stops receiving (and reflecting) and returns the counters: Streams
// (per A->B stream, in Spec order: Received, Lost, Reordered, Duplicate,
// Late, LastLossNs, latency; the first carries the socket's KernelDrops),
// Reflected and Paths. sent holds what port A sent per stream ID (nil:
// unknown; Lost is then zero). Frames the socket holds when Stop is called
// are counted first.
func (r *RemoteReceiver) Stop(sent map[uint16]uint64) (RemoteResult, error) {
	res, err := r.r.Stop(sent)
	return RemoteResult{Streams: res.Streams, Reflected: res.Reflected, Paths: res.Paths}, err
}

// RemoteSender is port B's running send half of one trial.
type RemoteSender struct{ s *udpSend }

// Stop stops sending, if it has not stopped already, waits for the sender
// to finish (one batch at most) and returns the counters: Streams (per B->A
// stream, in Spec order: Sent, IntendedFPS, OfferedFPS, TxSeconds, MaxLagNs,
// the catch-up figures), the tester-limit reasons of its generator and
// Paths. It may be called more than once.
func (s *RemoteSender) Stop() (RemoteResult, error) {
	res, err := s.s.Stop()
	return RemoteResult{Streams: res.Streams, TesterLimited: res.TesterLimitReason != "", TesterLimitReason: res.TesterLimitReason,
		TesterLimitTransient: res.TesterLimitReason != "" && res.TesterLimitTransient, Paths: res.Paths}, err
}
