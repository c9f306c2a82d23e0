package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// TCPTester is what the RFC 6349 test needs from the traffic engine:
// the idle path's RTT, and a TCP transfer with given windows and streams
// (trials.MeasureRTT and trials.RunTCP bound to two ends).
type TCPTester interface {
	MeasureRTT(ctx context.Context, probes int) (trials.RTTProbe, error)
	RunTCP(ctx context.Context, windowBytes, streams int, d time.Duration) (trials.TCPRun, error)
}

// TCPPlan parameterizes the RFC 6349 TCP throughput test. The zero value of
// every optional field is a documented default.
type TCPPlan struct {
	// BottleneckBps is the path's bottleneck bandwidth (RFC 6349 §3.2.2)
	// in bits/s, counted as the bottleneck counts it: OverheadBytes beyond
	// each IP packet. Required.
	BottleneckBps float64 `json:"bottleneck_bps"`
	// BottleneckSource says where BottleneckBps came from ("given", "the
	// lab's shaper").
	BottleneckSource string `json:"bottleneck_source,omitempty"`
	// OverheadBytes is what the bottleneck counts per packet beyond the
	// IP packet: 38 on an Ethernet line (header 14, FCS 4, preamble 8, gap
	// 12; the zero value), 14 for the lab's shapers (the Ethernet header:
	// tbf and the relay count the frame without its FCS).
	OverheadBytes int `json:"overhead_bytes"`
	// WindowBytes is each connection's TCP window
	// (trials.TCPConfig.WindowBytes); zero sizes it from the BDP (see
	// Windows).
	WindowBytes int `json:"window_bytes,omitempty"`
	// Streams is the number of connections; zero sizes it from the BDP.
	Streams int `json:"streams,omitempty"`
	// Duration of the transfer. Zero means 10 s.
	Duration Duration `json:"duration"`
	// RTTProbes is the number of idle-path RTT exchanges. Zero means 50.
	RTTProbes int `json:"rtt_probes,omitempty"`
}

// Defaults of TCPPlan.
const (
	DefaultTCPDuration  = 10 * time.Second
	DefaultRTTProbes    = 50
	EthernetOverhead    = 38
	LabShaperOverhead   = 14
	MaxTCPWindowPerConn = 16 << 20 // a larger BDP is split over more connections
	// WindowOverBDP is the window the test sizes for a BDP, as a multiple
	// of it: above 1 so the RTT's jitter and delayed ACKs never leave the
	// bottleneck idle, and the standing queue (the buffer delay) it builds
	// stays a fifth of the RTT.
	WindowOverBDP = 1.2
	minTCPWindow  = 64 << 10
)

// Validate checks p; the error names the field and the fix.
func (p TCPPlan) Validate() error {
	switch {
	case !(p.BottleneckBps > 0) || math.IsInf(p.BottleneckBps, 0):
		return fmt.Errorf("tcp bottleneck bandwidth %g bit/s: give the path's bottleneck, e.g. --bb 100mbit (RFC 6349 §3.2.2)", p.BottleneckBps)
	case p.OverheadBytes < 0 || p.OverheadBytes > 100:
		return fmt.Errorf("tcp overhead %d bytes: want 0 (Ethernet, 38) to 100", p.OverheadBytes)
	case p.WindowBytes < 0 || p.WindowBytes > trials.MaxTCPWindow:
		return fmt.Errorf("tcp window %d bytes: want 0 (from the BDP) up to %d", p.WindowBytes, trials.MaxTCPWindow)
	case p.Streams < 0 || p.Streams > trials.MaxTCPStreams:
		return fmt.Errorf("tcp streams %d: want 0 (from the BDP) to %d", p.Streams, trials.MaxTCPStreams)
	case p.Duration < 0:
		return fmt.Errorf("tcp duration %v: must not be negative", p.Duration)
	case p.RTTProbes < 0 || p.RTTProbes > 10000:
		return fmt.Errorf("tcp rtt probes %d: want 0 (50) to 10000", p.RTTProbes)
	}
	return nil
}

// TCPResult is the RFC 6349 test's outcome: the path (MTU, RTT, BB, BDP),
// the transfer, and the three RFC 6349 metrics (§4).
type TCPResult struct {
	Plan TCPPlan `json:"plan"`
	// Direction names the direction of a test run in both at once
	// (RunTCPTestBoth; the caller's words, e.g. "A to B, both directions
	// at once"); empty for a test in one direction.
	Direction string `json:"direction,omitempty"`
	// Path: the kernel's path MTU and full-segment payload (MSS less
	// options, as TCP_INFO reports it), and the idle path's RTT.
	PathMTU        int   `json:"path_mtu"`
	MSSBytes       int   `json:"mss_bytes"`
	BaselineRTTNs  int64 `json:"baseline_rtt_ns"`
	BaselineMeanNs int64 `json:"baseline_rtt_mean_ns"`
	// BDPBytes is BottleneckBps × BaselineRTT / 8 (RFC 6349 §3.2.3).
	BDPBytes float64 `json:"bdp_bytes"`
	// WindowBytes and Streams are what ran (sized from the BDP unless
	// given); WindowSource says which.
	WindowBytes  int    `json:"window_bytes"`
	Streams      int    `json:"streams"`
	WindowSource string `json:"window_source"`
	// PeerWindowBytes is the largest advertised receive window the senders
	// saw, summed over the connections (TCP_INFO snd_wnd): the window that
	// ran; 0 when the kernel does not report it.
	PeerWindowBytes int64 `json:"peer_window_bytes"`
	// MaxBps is the maximum achievable TCP throughput (RFC 6349 §3.3.1):
	// BB × MSS / (PathMTU + overhead); MaxFormula writes it out. When the
	// window that ran is below the BDP it is the window's bound instead:
	// window × 8 / RTT (RFC 6349 §3.3.2).
	MaxBps     float64 `json:"max_bps"`
	MaxFormula string  `json:"max_formula"`
	// ThroughputBps is the achieved payload rate; PercentOfMax its share
	// of MaxBps.
	ThroughputBps float64 `json:"throughput_bps"`
	PercentOfMax  float64 `json:"percent_of_max"`
	// IdealTransferS is the payload's bits over MaxBps; ActualTransferS
	// the measured time; TransferTimeRatio their ratio (RFC 6349 §4.1).
	IdealTransferS    float64 `json:"ideal_transfer_s"`
	ActualTransferS   float64 `json:"actual_transfer_s"`
	TransferTimeRatio float64 `json:"transfer_time_ratio"`
	// EfficiencyPercent is (sent − retransmitted) / sent × 100 (RFC 6349
	// §4.2), from TCP_INFO; −1 when the kernel does not count bytes sent.
	EfficiencyPercent float64 `json:"efficiency_percent"`
	// BufferDelayPercent is (mean RTT during the transfer − baseline RTT)
	// / baseline RTT × 100 (RFC 6349 §4.3).
	BufferDelayPercent float64 `json:"buffer_delay_percent"`
	// Run is the transfer as measured, with its per-second samples.
	Run trials.TCPRun `json:"run"`
}

// MaxTCPBps is RFC 6349 §3.3.1's maximum achievable TCP throughput on a
// bottleneck of bb bit/s that counts overhead bytes per packet beyond the
// IP packet: bb × mss / (mtu + overhead), where mss is a full segment's
// payload and mtu its IP packet.
func MaxTCPBps(bb float64, mtu, mss, overhead int) float64 {
	if mtu <= 0 || mss <= 0 {
		return 0
	}
	return bb * float64(mss) / float64(mtu+overhead)
}

// BDPBytes is the bandwidth-delay product of bb bit/s and rtt, in bytes.
func BDPBytes(bb float64, rtt time.Duration) float64 { return bb * rtt.Seconds() / 8 }

// Windows sizes the connections for a BDP (RFC 6349 §3.3.2: the window
// must be at least the BDP): WindowOverBDP × the BDP, split over as many
// connections as keep each at or under MaxTCPWindowPerConn, at least
// 64 KiB each.
func Windows(bdp float64) (window, streams int) {
	total := WindowOverBDP * bdp
	streams = max(1, int(math.Ceil(total/MaxTCPWindowPerConn)))
	window = max(minTCPWindow, int(math.Ceil(total/float64(streams))))
	return window, streams
}

// TransferTimeRatio is RFC 6349 §4.1's ratio of the actual to the ideal
// transfer time of bytes at maxBps; 0 when either is unknown.
func TransferTimeRatio(bytes uint64, actualS, maxBps float64) (ideal, ratio float64) {
	if maxBps <= 0 || bytes == 0 {
		return 0, 0
	}
	ideal = float64(bytes) * 8 / maxBps
	return ideal, actualS / ideal
}

// EfficiencyPercent is RFC 6349 §4.2's TCP efficiency; −1 when sent is 0.
func EfficiencyPercent(sent, retrans uint64) float64 {
	if sent == 0 {
		return -1
	}
	return float64(sent-min(retrans, sent)) / float64(sent) * 100
}

// BufferDelayPercent is RFC 6349 §4.3's buffer delay: the rise of the
// mean RTT during the transfer over the baseline RTT, in percent.
func BufferDelayPercent(meanRTT, baseline time.Duration) float64 {
	if baseline <= 0 {
		return 0
	}
	return float64(meanRTT-baseline) / float64(baseline) * 100
}

// RunTCPTest runs RFC 6349's steps in order: path MTU and baseline RTT on
// the idle path (§3.2), the BDP from the bottleneck bandwidth, then the
// TCP throughput test (§3.3) with windows and connections sized from the
// BDP unless given, and the metrics of §4.
func RunTCPTest(ctx context.Context, t TCPTester, p TCPPlan) (TCPResult, error) {
	res, p, err := tcpBaseline(ctx, t, p)
	if err != nil {
		return res, err
	}
	run, err := t.RunTCP(ctx, res.WindowBytes, res.Streams, p.Duration.D())
	res.Run = run
	if err != nil {
		return res, fmt.Errorf("tcp throughput: %w", err)
	}
	tcpMetrics(&res, p, run)
	return res, ctx.Err()
}

// RunTCPTestBoth runs RFC 6349's steps in both directions at once: t[0]
// and p[0] for one, t[1] and p[1] for the other (each plan with its own
// direction's bottleneck). The baseline RTTs are measured first, one
// after the other, on the idle path; then both transfers run at the same
// time, each judged by §4's metrics against its own maximum. A full-duplex
// path carries both at its rates; one that shares a resource between the
// directions (a half-duplex link, a DUT's CPU) shows it as a shortfall.
func RunTCPTestBoth(ctx context.Context, t [2]TCPTester, p [2]TCPPlan) ([2]TCPResult, error) {
	var res [2]TCPResult
	for i := range t {
		r, pi, err := tcpBaseline(ctx, t[i], p[i])
		res[i], p[i] = r, pi
		if err != nil {
			return res, fmt.Errorf("direction %d: %w", i+1, err)
		}
	}
	var runs [2]trials.TCPRun
	var errs [2]error
	var wg sync.WaitGroup
	for i := range t {
		wg.Go(func() {
			runs[i], errs[i] = t[i].RunTCP(ctx, res[i].WindowBytes, res[i].Streams, p[i].Duration.D())
		})
	}
	wg.Wait()
	for i := range t {
		res[i].Run = runs[i]
		if errs[i] != nil {
			return res, fmt.Errorf("direction %d: tcp throughput: %w", i+1, errs[i])
		}
		tcpMetrics(&res[i], p[i], runs[i])
	}
	return res, ctx.Err()
}

// tcpBaseline checks p, fills its defaults and runs the steps before the
// transfer: path MTU and baseline RTT on the idle path, the BDP, the
// windows and connections.
func tcpBaseline(ctx context.Context, t TCPTester, p TCPPlan) (TCPResult, TCPPlan, error) {
	res := TCPResult{Plan: p}
	if err := p.Validate(); err != nil {
		return res, p, err
	}
	if p.Duration == 0 {
		p.Duration = Duration(DefaultTCPDuration)
	}
	if p.RTTProbes == 0 {
		p.RTTProbes = DefaultRTTProbes
	}
	if p.OverheadBytes == 0 {
		p.OverheadBytes = EthernetOverhead
	}
	res.Plan = p
	probe, err := t.MeasureRTT(ctx, p.RTTProbes)
	if err != nil {
		return res, p, fmt.Errorf("baseline rtt: %w", err)
	}
	if probe.MinNs <= 0 || probe.PathMTU <= 0 {
		return res, p, errors.New("baseline rtt: the probe measured no round trip or path MTU")
	}
	res.PathMTU, res.MSSBytes = probe.PathMTU, probe.MSSBytes
	res.BaselineRTTNs, res.BaselineMeanNs = probe.MinNs, probe.MeanNs
	res.BDPBytes = BDPBytes(p.BottleneckBps, time.Duration(probe.MinNs))
	res.WindowBytes, res.Streams = Windows(res.BDPBytes)
	res.WindowSource = fmt.Sprintf("sized from the BDP (%g × BDP)", WindowOverBDP)
	if p.WindowBytes > 0 || p.Streams > 0 {
		res.WindowSource = "given"
		if p.WindowBytes > 0 {
			res.WindowBytes = p.WindowBytes
		}
		if p.Streams > 0 {
			res.Streams = p.Streams
		}
	}
	return res, p, nil
}

// tcpMetrics computes §3.3's maximum and §4's metrics of a transfer run
// into res.
func tcpMetrics(res *TCPResult, p TCPPlan, run trials.TCPRun) {
	rtt := time.Duration(res.BaselineRTTNs)
	mss := run.MSSBytes
	if mss <= 0 {
		mss = res.MSSBytes
	}
	res.MSSBytes = mss
	res.MaxBps = MaxTCPBps(p.BottleneckBps, res.PathMTU, mss, p.OverheadBytes)
	res.MaxFormula = fmt.Sprintf("BB × MSS / (MTU + %d) = %.6g × %d / %d", p.OverheadBytes, p.BottleneckBps, mss, res.PathMTU+p.OverheadBytes)
	// The window that ran is what the receivers advertised (the kernel
	// may round the one asked for up to 65535 << wscale); it bounds the
	// throughput when below the BDP.
	for _, smp := range run.Samples {
		res.PeerWindowBytes = max(res.PeerWindowBytes, smp.PeerWindowBytes)
	}
	win := res.PeerWindowBytes
	if win <= 0 {
		win = int64(res.Streams) * int64(res.WindowBytes)
	}
	if bound := float64(win) * 8 / rtt.Seconds(); bound < res.MaxBps {
		res.MaxBps = bound
		res.MaxFormula = fmt.Sprintf("window × 8 / RTT = %d × 8 / %v (the advertised windows, summed, are below the BDP)", win, rtt)
	}
	res.ThroughputBps = run.Bps
	if res.MaxBps > 0 {
		res.PercentOfMax = run.Bps / res.MaxBps * 100
	}
	res.ActualTransferS = run.Seconds
	res.IdealTransferS, res.TransferTimeRatio = TransferTimeRatio(run.Bytes, run.Seconds, res.MaxBps)
	res.EfficiencyPercent = EfficiencyPercent(run.BytesSent, run.BytesRetrans)
	res.BufferDelayPercent = BufferDelayPercent(time.Duration(run.MeanRTTNs), rtt)
}
