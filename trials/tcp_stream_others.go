//go:build !linux

package trials

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// ListenTCP returns an error: the TCP test is Linux-only.
func ListenTCP(TCPEnd, int) (*net.TCPListener, error) { return nil, errTCPNotSupported }

// DialTCP returns an error: the TCP test is Linux-only.
func DialTCP(context.Context, TCPEnd, netip.AddrPort, int) (*net.TCPConn, error) {
	return nil, errTCPNotSupported
}

// ClampTCPWindow returns an error: the TCP test is Linux-only.
func ClampTCPWindow(*net.TCPConn, int) error { return errTCPNotSupported }

// TCPSendConfig is the sender's half of a TCP test (Linux only).
type TCPSendConfig struct {
	Duration, SampleEvery, Drain time.Duration
	Budget                       uint64
	MaxPacingBps                 float64
}

// TCPSendStats is what the sender's half measured.
type TCPSendStats struct {
	Run     TCPRun
	Written uint64
	Capped  bool
}

// SendTCP returns an error: the TCP test is Linux-only.
func SendTCP(_ context.Context, conns []*net.TCPConn, _ TCPSendConfig) (TCPSendStats, error) {
	for _, c := range conns {
		c.Close()
	}
	return TCPSendStats{}, errTCPNotSupported
}

// TCPRecvStats is what the receiver's half counted.
type TCPRecvStats struct {
	Bytes       uint64
	First, Last time.Time
	Capped      bool
}

// Span is the time from the first byte read to the last.
func (s TCPRecvStats) Span() time.Duration { return s.Last.Sub(s.First) }

// ReceiveTCP returns an error: the TCP test is Linux-only.
func ReceiveTCP(_ context.Context, conns []*net.TCPConn, _ time.Time, _ float64) (TCPRecvStats, error) {
	for _, c := range conns {
		c.Close()
	}
	return TCPRecvStats{}, errTCPNotSupported
}

// EchoTCP returns an error: the TCP test is Linux-only.
func EchoTCP(c *net.TCPConn, _ int) (uint64, error) { c.Close(); return 0, errTCPNotSupported }

// ProbeRTT returns an error: the TCP test is Linux-only.
func ProbeRTT(context.Context, *net.TCPConn, int) (RTTProbe, error) {
	return RTTProbe{}, errTCPNotSupported
}
