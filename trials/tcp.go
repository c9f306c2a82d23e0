package trials

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// TCPConfig is one TCP throughput measurement (RFC 6349 §3.3) between two
// hosts' kernel TCP stacks, each end optionally in a network namespace: the
// sender writes on Streams connections for Duration, the receiver reads.
type TCPConfig struct {
	// Sender and Receiver are the two ends: the receiver listens on its
	// address, the sender connects from its own.
	Sender, Receiver TCPEnd `json:"-"`
	// Streams is the number of TCP connections at once. Zero means 1.
	Streams int `json:"streams"`
	// WindowBytes, when positive, is each connection's TCP window: the
	// receiver's advertised window is clamped to it (TCP_WINDOW_CLAMP) and
	// both ends' socket buffers are twice it; zero leaves the kernel's
	// autotuning. The kernel of the lab box (6.x) was seen advertising
	// 65535 << wscale above the clamp: TCPSample.PeerWindowBytes is the
	// window that ran.
	WindowBytes int `json:"window_bytes,omitempty"`
	// Duration is how long the sender writes. Required.
	Duration time.Duration `json:"duration_ns"`
	// SampleEvery is the period of the TCP_INFO samples. Zero means 1 s.
	SampleEvery time.Duration `json:"sample_every_ns,omitempty"`
	// AllowAnyDestination permits addresses outside the benchmark ranges
	// 198.18.0.0/15 and 2001:2::/48 (RFC 6815).
	AllowAnyDestination bool `json:"allow_any_destination,omitempty"`
}

// TCPEnd is one end of a TCP test.
type TCPEnd struct {
	// Namespace holds the socket (as under /run/netns); empty is the
	// caller's.
	Namespace string
	// Addr is the end's address. Required.
	Addr netip.Addr
	// Port is the receiver's listening port; zero picks a free one. The
	// sender's port is always the kernel's choice.
	Port uint16
}

// Validate checks c; the error names the field and the fix.
func (c TCPConfig) Validate() error {
	for _, e := range []struct {
		name string
		end  TCPEnd
	}{{"sender", c.Sender}, {"receiver", c.Receiver}} {
		if !e.end.Addr.IsValid() {
			return fmt.Errorf("tcp %s addr: not set; give the %s's IP address", e.name, e.name)
		}
		if !c.AllowAnyDestination && !benchNet4.Contains(e.end.Addr) && !benchNet6.Contains(e.end.Addr) {
			return fmt.Errorf("tcp %s addr %v: outside the benchmark ranges %v and %v (RFC 6815): use test addresses, or allow any destination if this network is yours to load",
				e.name, e.end.Addr, benchNet4, benchNet6)
		}
	}
	if c.Sender.Addr.Is4() != c.Receiver.Addr.Is4() {
		return fmt.Errorf("tcp addresses %v and %v: give both IPv4 or both IPv6", c.Sender.Addr, c.Receiver.Addr)
	}
	if c.Streams < 0 || c.Streams > MaxTCPStreams {
		return fmt.Errorf("tcp streams %d: want 1 to %d (0 means 1)", c.Streams, MaxTCPStreams)
	}
	if c.WindowBytes < 0 || c.WindowBytes > MaxTCPWindow {
		return fmt.Errorf("tcp window %d bytes: want 0 (kernel autotuning) to %d", c.WindowBytes, MaxTCPWindow)
	}
	if c.Duration <= 0 {
		return fmt.Errorf("tcp duration %v: must be positive, e.g. 10s", c.Duration)
	}
	if c.SampleEvery < 0 {
		return fmt.Errorf("tcp sample period %v: must not be negative", c.SampleEvery)
	}
	return nil
}

// Bounds of a TCP test.
const (
	// MaxTCPStreams bounds TCPConfig.Streams.
	MaxTCPStreams = 128
	// MaxTCPWindow bounds TCPConfig.WindowBytes: 1 GiB, TCP's largest
	// scaled window.
	MaxTCPWindow = 1 << 30
)

// TCPSample is one period of a TCP test, summed over its connections.
type TCPSample struct {
	// AtS is the end of the period, in seconds from the first write.
	AtS float64 `json:"at_s"`
	// Bps is the payload bit rate the receiver got in the period.
	Bps float64 `json:"bps"`
	// RTTNs is the connections' mean smoothed RTT (TCP_INFO) at the end of
	// the period.
	RTTNs int64 `json:"rtt_ns"`
	// CwndBytes is the connections' summed congestion window (segments ×
	// MSS) at the end of the period.
	CwndBytes int64 `json:"cwnd_bytes"`
	// RetransBytes is what the senders retransmitted in the period.
	RetransBytes uint64 `json:"retrans_bytes"`
	// PeerWindowBytes is the receivers' summed advertised window as the
	// senders last saw it (TCP_INFO snd_wnd; 0 on kernels without it).
	PeerWindowBytes int64 `json:"peer_window_bytes"`
}

// TCPRun is what a TCP test measured.
type TCPRun struct {
	// Streams is the number of connections; WindowBytes the window of
	// each (0: autotuning).
	Streams     int `json:"streams"`
	WindowBytes int `json:"window_bytes,omitempty"`
	// MSSBytes is the payload of a full segment (TCP_INFO's snd_mss:
	// the MSS less TCP options such as timestamps).
	MSSBytes int `json:"mss_bytes"`
	// Bytes is the payload the receiver got; Seconds the time from the
	// first write to the last byte's arrival; Bps their ratio in bits/s.
	Bytes   uint64  `json:"bytes"`
	Seconds float64 `json:"transfer_s"`
	Bps     float64 `json:"bps"`
	// BytesSent and BytesRetrans are the senders' TCP_INFO totals
	// (retransmissions included in BytesSent); BytesSent is 0 when the
	// kernel does not report it.
	BytesSent    uint64 `json:"bytes_sent"`
	BytesRetrans uint64 `json:"bytes_retrans"`
	// MeanRTTNs is the mean of the samples' RTT during the transfer.
	MeanRTTNs int64 `json:"mean_rtt_ns"`
	// Samples are the per-period figures.
	Samples []TCPSample `json:"samples"`
}

// WindowBps is the rate the receivers' advertised windows allow over the
// RTTs the transfer saw: the mean, over the samples that have both, of
// PeerWindowBytes × 8 / RTTNs. A connection held by its receive window
// moves one window per round trip (RFC 6349: window × 8 / RTT), so its throughput is
// this; an RTT that rose during the transfer (a DUT slower under load)
// lowers both. Zero when no sample has both.
func (r TCPRun) WindowBps() float64 {
	var sum float64
	var n int
	for _, s := range r.Samples {
		if s.PeerWindowBytes > 0 && s.RTTNs > 0 {
			sum += float64(s.PeerWindowBytes) * 8 / (float64(s.RTTNs) / 1e9)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// RTTProbe is the idle path's round-trip time (RFC 6349 §3.2.1), measured
// as one-byte exchanges on one TCP connection with Nagle off.
type RTTProbe struct {
	// MinNs and MeanNs are over Count exchanges.
	MinNs  int64 `json:"min_ns"`
	MeanNs int64 `json:"mean_ns"`
	Count  int   `json:"count"`
	// PathMTU is the kernel's path MTU of the connection (IP_MTU) and
	// MSSBytes its full-segment payload (TCP_MAXSEG).
	PathMTU  int `json:"path_mtu"`
	MSSBytes int `json:"mss_bytes"`
}

// TCPPair binds MeasureRTT and RunTCP to two ends, for the RFC 6349 test
// (rfc2544.TCPTester): Base's Streams, WindowBytes and Duration are
// replaced by each call's.
type TCPPair struct{ Base TCPConfig }

// MeasureRTT measures the idle path's RTT with probes exchanges.
func (p TCPPair) MeasureRTT(ctx context.Context, probes int) (RTTProbe, error) {
	return MeasureRTT(ctx, p.Base, probes)
}

// RunTCP runs a transfer of streams connections with windowBytes buffers for d.
func (p TCPPair) RunTCP(ctx context.Context, windowBytes, streams int, d time.Duration) (TCPRun, error) {
	c := p.Base
	c.WindowBytes, c.Streams, c.Duration = windowBytes, streams, d
	return RunTCP(ctx, c)
}
