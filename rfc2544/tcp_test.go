package rfc2544

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

func TestTCPArithmetic(t *testing.T) {
	// RFC 6349 §3.3.1's example: 100 Mbit/s Ethernet, MTU 1500, MSS 1460:
	// 100 × 1460 / 1538 = 94.93 Mbit/s.
	if got := MaxTCPBps(100e6, 1500, 1460, EthernetOverhead); math.Abs(got-94.928e6) > 1e3 {
		t.Errorf("MaxTCPBps(100M, 1500, 1460, 38) = %.0f, want 94.93 Mbit/s", got)
	}
	// 100 Mbit/s and 10 ms: 125,000 bytes.
	if got := BDPBytes(100e6, 10*time.Millisecond); got != 125000 {
		t.Errorf("BDP = %g, want 125000", got)
	}
	if w, s := Windows(125000); w != 150000 || s != 1 {
		t.Errorf("Windows(125 kB) = %d, %d; want 150000 in 1 stream", w, s)
	}
	if w, s := Windows(20e6); s != 2 || w != 12e6 {
		t.Errorf("Windows(20 MB) = %d, %d; want 2 streams of 12 MB", w, s)
	}
	if ideal, r := TransferTimeRatio(12_500_000, 1.25, 100e6); ideal != 1 || r != 1.25 {
		t.Errorf("TransferTimeRatio = %g, %g; want 1 s and 1.25", ideal, r)
	}
	if e := EfficiencyPercent(1000, 10); e != 99 {
		t.Errorf("efficiency %g, want 99", e)
	}
	if e := EfficiencyPercent(0, 0); e != -1 {
		t.Errorf("efficiency of nothing sent %g, want -1", e)
	}
	if b := BufferDelayPercent(15*time.Millisecond, 10*time.Millisecond); b != 50 {
		t.Errorf("buffer delay %g, want 50", b)
	}
}

// fakeTCP is a path of bb bit/s (counting 14 bytes per packet) and rtt.
type fakeTCP struct {
	bb        float64
	rtt       time.Duration
	gotWindow int
	gotStream int
}

func (f *fakeTCP) MeasureRTT(ctx context.Context, n int) (trials.RTTProbe, error) {
	return trials.RTTProbe{MinNs: int64(f.rtt), MeanNs: int64(f.rtt), Count: n, PathMTU: 1500, MSSBytes: 1460}, nil
}

func (f *fakeTCP) RunTCP(ctx context.Context, window, streams int, d time.Duration) (trials.TCPRun, error) {
	f.gotWindow, f.gotStream = window, streams
	bps := min(f.bb*1448/1514, float64(window*streams)*8/f.rtt.Seconds())
	return trials.TCPRun{Streams: streams, WindowBytes: window, MSSBytes: 1448, Bytes: uint64(bps * d.Seconds() / 8), Seconds: d.Seconds() * 1.05,
		Bps: bps / 1.05, BytesSent: 1000, BytesRetrans: 5, MeanRTTNs: int64(f.rtt) * 3 / 2,
		Samples: []trials.TCPSample{{PeerWindowBytes: int64(window * streams)}}}, nil
}

func TestRunTCPTest(t *testing.T) {
	f := &fakeTCP{bb: 100e6, rtt: 20 * time.Millisecond}
	res, err := RunTCPTest(context.Background(), f, TCPPlan{BottleneckBps: 100e6, OverheadBytes: LabShaperOverhead, Duration: Duration(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if res.BDPBytes != 250000 || f.gotWindow != 300000 || f.gotStream != 1 {
		t.Errorf("BDP %g, window %d × %d: want 250000 and 300000 × 1", res.BDPBytes, f.gotWindow, f.gotStream)
	}
	if want := 100e6 * 1448 / 1514; math.Abs(res.MaxBps-want) > 1 {
		t.Errorf("max %.0f, want %.0f (%s)", res.MaxBps, want, res.MaxFormula)
	}
	if math.Abs(res.TransferTimeRatio-1.05) > 1e-6 || res.EfficiencyPercent != 99.5 || math.Abs(res.BufferDelayPercent-50) > 1e-9 {
		t.Errorf("TTR %g, efficiency %g, buffer delay %g: want 1.05, 99.5, 50", res.TransferTimeRatio, res.EfficiencyPercent, res.BufferDelayPercent)
	}
	// A window below the BDP bounds the maximum: window × 8 / RTT.
	res, err = RunTCPTest(context.Background(), f, TCPPlan{BottleneckBps: 100e6, OverheadBytes: LabShaperOverhead, WindowBytes: 100000, Streams: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := 100000 * 8 / 0.02; math.Abs(res.MaxBps-want) > 1 || !strings.Contains(res.MaxFormula, "below the BDP") {
		t.Errorf("window-bound max %.0f (%s), want %.0f", res.MaxBps, res.MaxFormula, want)
	}
	if _, err := RunTCPTest(context.Background(), f, TCPPlan{}); err == nil || !strings.Contains(err.Error(), "--bb") {
		t.Errorf("no bottleneck: %v, want an error naming --bb", err)
	}
}

// bothTCP is a fakeTCP direction of a test in both directions: its
// transfer waits for the other direction's to start (they run at the same
// time or fail), and its RTT probe fails once any transfer has begun (the
// baselines are of the idle path).
type bothTCP struct {
	fakeTCP
	started, other chan struct{}
	anyRun         *atomic.Bool
}

func (b *bothTCP) MeasureRTT(ctx context.Context, n int) (trials.RTTProbe, error) {
	if b.anyRun.Load() {
		return trials.RTTProbe{}, errors.New("baseline measured while a transfer ran")
	}
	return b.fakeTCP.MeasureRTT(ctx, n)
}

func (b *bothTCP) RunTCP(ctx context.Context, window, streams int, d time.Duration) (trials.TCPRun, error) {
	b.anyRun.Store(true)
	close(b.started)
	select {
	case <-b.other:
	case <-time.After(5 * time.Second):
		return trials.TCPRun{}, errors.New("the other direction's transfer never ran beside this one")
	}
	return b.fakeTCP.RunTCP(ctx, window, streams, d)
}

// TestRunTCPTestBoth: both directions' baselines on the idle path, then
// both transfers at the same time, each judged against its own bottleneck
// (100 and 30 Mbit/s here).
func TestRunTCPTestBoth(t *testing.T) {
	var anyRun atomic.Bool
	s0, s1 := make(chan struct{}), make(chan struct{})
	d0 := &bothTCP{fakeTCP: fakeTCP{bb: 100e6, rtt: 20 * time.Millisecond}, started: s0, other: s1, anyRun: &anyRun}
	d1 := &bothTCP{fakeTCP: fakeTCP{bb: 30e6, rtt: 20 * time.Millisecond}, started: s1, other: s0, anyRun: &anyRun}
	p := func(bb float64) TCPPlan {
		return TCPPlan{BottleneckBps: bb, OverheadBytes: LabShaperOverhead, Duration: Duration(time.Second)}
	}
	res, err := RunTCPTestBoth(context.Background(), [2]TCPTester{d0, d1}, [2]TCPPlan{p(100e6), p(30e6)})
	if err != nil {
		t.Fatal(err)
	}
	for i, bb := range []float64{100e6, 30e6} {
		r := res[i]
		if want := bb * 1448 / 1514; math.Abs(r.MaxBps-want) > 1 || math.Abs(r.TransferTimeRatio-1.05) > 1e-6 || r.BDPBytes != bb*0.02/8 {
			t.Errorf("direction %d: max %.0f (want %.0f), TTR %g (want 1.05), BDP %g (want %g)", i+1, r.MaxBps, want, r.TransferTimeRatio, r.BDPBytes, bb*0.02/8)
		}
	}
	if _, err := RunTCPTestBoth(context.Background(), [2]TCPTester{&fakeTCP{bb: 1e6, rtt: time.Millisecond}, &fakeTCP{bb: 1e6, rtt: time.Millisecond}},
		[2]TCPPlan{p(1e6), {}}); err == nil || !strings.Contains(err.Error(), "direction 2") {
		t.Errorf("no bottleneck for direction 2: %v, want an error naming it", err)
	}
}
