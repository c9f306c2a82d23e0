package trials

import (
	"net/netip"
	"time"
)

// udpHalfConfig is one host's half of a two-host UDP trial: the sockets of
// one tester port whose peer runs on another host (RemoteEngine's port A,
// RemotePort's port B). The zero value
// of every field is a documented default.
type udpHalfConfig struct {
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

func (c udpHalfConfig) withDefaults() udpHalfConfig {
	if c.SocketBuffer <= 0 {
		c.SocketBuffer = DefaultUDPSocketBuffer
	}
	if c.Batch <= 0 || c.Batch > udpMaxBatch {
		c.Batch = udpMaxBatch
	}
	c.TesterLimitTolerance, c.MaxLag = limitDefaults(c.TesterLimitTolerance, c.MaxLag)
	return c
}

// udpReceiveOptions says what a udpReceive counts and where it reflects.
type udpReceiveOptions struct {
	// Listen is the address the receive socket binds to; port zero picks
	// a free port (udpReceive.Port says which).
	Listen netip.AddrPort
	// From, when valid, is the only source address whose datagrams are
	// counted or reflected; datagrams from anywhere else are ignored.
	From netip.Addr
	// Reflect, when valid, is where received test frames of the counted
	// streams are sent back unchanged (same signature, same transmit
	// stamp), from the receive socket, so the sender times their round
	// trip. At most ReflectFPS frames per second are reflected (a token
	// bucket holding 50 ms of them, at least one).
	Reflect    netip.AddrPort
	ReflectFPS float64
	// RoundTrip lists streams this port sent whose reflected copies come
	// back to it: their latency (receive time minus the original transmit
	// stamp) is the round trip, reported in udpReceiveResult.RoundTrip.
	// The tagged frame of each is the one its udpSend tagged.
	RoundTrip []Stream
	// Tx is the udpSend of the RoundTrip streams (it knows which frame was
	// tagged); nil when there are none.
	Tx *udpSend
}

// udpReceiveResult is what a udpReceive counted.
type udpReceiveResult struct {
	// Streams holds the receive counters of each counted stream (in the
	// order given to startUDPReceive): Received, Lost, Reordered,
	// Duplicate, Late, LastLossNs, latency; Sent is what the sender
	// reported (Stop's sent).
	Streams []StreamResult
	// RoundTrip holds, per udpReceiveOptions.RoundTrip stream, the latency
	// of its reflected frames: Latency and TaggedLatencyNs are round
	// trips, Received counts the reflected frames timed.
	RoundTrip []StreamResult
	// Reflected counts frames sent back to udpReceiveOptions.Reflect.
	Reflected uint64
	// KernelDrops counts datagrams the socket dropped in the kernel.
	KernelDrops uint64
	// Paths are the kernel paths used.
	Paths Paths
}

// udpSendOptions says where a udpSend sends and within which limits.
type udpSendOptions struct {
	// Src is the local source address; the zero Addr lets the kernel
	// choose it.
	Src netip.Addr
	// Dst is the only destination: every send socket is connected to it,
	// and the sender checks the connection (getpeername) before the first
	// frame.
	Dst netip.AddrPort
	// MaxFPS caps the streams' summed rate, in frames per second; zero
	// means no cap. A trial above it is refused.
	MaxFPS float64
	// Deadline, when set, is when sending stops whatever the pacer says.
	Deadline time.Time
}

// udpSendResult is what a udpSend sent.
type udpSendResult struct {
	// Streams holds the send counters of each stream (Sent, IntendedFPS,
	// OfferedFPS, TxSeconds, MaxLagNs), in the order given.
	Streams []StreamResult
	// TesterLimitReason, when not empty, says why the generator fell
	// short of the intended load.
	TesterLimitReason string
	// Paths are the kernel paths used.
	Paths Paths
}
