//go:build linux

package trials

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// loopRemote is port B of a RemoteEngine on this host's loopback: a
// RemotePort driven by direct calls instead of an agent's session.
type loopRemote struct {
	p     RemotePort
	lo    netip.Addr
	spec  Spec
	runID uint8
	port  uint16 // port A's
	rx    *RemoteReceiver
	tx    *RemoteSender
	done  chan struct{}
	err   error // Err, once done is closed
	stops int   // Stop calls
	// limit, when set, is port B's tester-limit verdict in place of its
	// sender's.
	limit *RemoteResult
}

func newLoopRemote() *loopRemote {
	return &loopRemote{p: RemotePort{SocketBuffer: 4 << 20}, lo: netip.MustParseAddr("127.0.0.1"), done: make(chan struct{})}
}

func (l *loopRemote) Addr() netip.Addr      { return l.lo }
func (l *loopRemote) Done() <-chan struct{} { return l.done }
func (l *loopRemote) Err() error            { return l.err }

func (l *loopRemote) Setup(_ context.Context, t RemoteTrial) (RemoteReady, error) {
	l.spec, l.runID, l.port, l.tx = t.Spec, uint8(t.ID%255)+1, t.Port, nil
	opt := RemoteReceive{Listen: netip.AddrPortFrom(l.lo, 0), From: l.lo}
	if t.RoundTrip {
		opt.Reflect, opt.ReflectFPS = netip.AddrPortFrom(l.lo, t.Port), 1000
	}
	rx, err := l.p.Receive(t.Spec, l.runID, opt)
	if err != nil {
		return RemoteReady{}, err
	}
	l.rx = rx
	length := max(t.Spec.Learning, udpMinLearning) + t.Spec.Duration + t.Spec.Settle
	return RemoteReady{Port: rx.Port(), RunID: l.runID, Reflect: t.RoundTrip, Length: length}, nil
}

func (l *loopRemote) Start(ctx context.Context, _ uint64) error {
	if len(streamsOf(l.spec, BtoA)) == 0 {
		return nil
	}
	tx, err := l.p.Send(context.WithoutCancel(ctx), l.spec, l.runID, RemoteSend{Src: l.lo, Dst: netip.AddrPortFrom(l.lo, l.port)})
	l.tx = tx
	return err
}

func (l *loopRemote) Stop(_ context.Context, _ uint64, sent []StreamResult) (RemoteResult, error) {
	l.stops++
	var out RemoteResult
	if l.tx != nil {
		sr, err := l.tx.Stop()
		if err != nil {
			return out, err
		}
		out.Streams = append(out.Streams, sr.Streams...)
		out.TesterLimited, out.TesterLimitReason, out.TesterLimitTransient = sr.TesterLimited, sr.TesterLimitReason, sr.TesterLimitTransient
	}
	if l.limit != nil {
		out.TesterLimited, out.TesterLimitReason, out.TesterLimitTransient = l.limit.TesterLimited, l.limit.TesterLimitReason, l.limit.TesterLimitTransient
	}
	counts := map[uint16]uint64{}
	for _, s := range sent {
		counts[s.ID] = s.Sent
	}
	rr, err := l.rx.Stop(counts)
	out.Streams = append(out.Streams, rr.Streams...)
	return out, err
}

// TestRemoteIntervalsSumToTotals: a two-host trial (here port B on this
// host's loopback) reports one interval per second while the trial runs,
// marked Partial, with the traffic this host saw in each, and a final
// whole one; the intervals add up exactly to the trial's Sent and Received.
func TestRemoteIntervalsSumToTotals(t *testing.T) {
	var mu sync.Mutex
	var ivs []Interval
	spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}, RateFPS: 5000, Duration: 2500 * time.Millisecond,
		Settle: 100 * time.Millisecond,
		OnInterval: func(iv Interval) {
			mu.Lock()
			ivs = append(ivs, iv)
			mu.Unlock()
		}}
	lr := newLoopRemote()
	e, err := NewRemote(RemoteConfig{Local: UDPPortConfig{Addr: lr.lo, Port: 42590}, SocketBuffer: 4 << 20}, lr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Totals()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("sent %d received %d; intervals %+v", tot.Sent, tot.Received, ivs)
	if len(ivs) != Intervals(spec) {
		t.Fatalf("%d intervals, want %d", len(ivs), Intervals(spec))
	}
	var offered, received uint64
	for i, iv := range ivs {
		offered += iv.Offered
		received += iv.Received
		last := i == len(ivs)-1
		if iv.Index != i || iv.Final != last || iv.Partial == last {
			t.Errorf("interval %d: index %d final %v partial %v", i, iv.Index, iv.Final, iv.Partial)
		}
		if !last {
			if iv.LossSoFarPercent != 0 {
				t.Errorf("interval %d: partial with loss so far %g %%, want 0 (unknown)", i, iv.LossSoFarPercent)
			}
			// Traffic runs through every second of the trial.
			if iv.Offered == 0 || iv.Received == 0 || iv.LatencyMaxNs <= 0 {
				t.Errorf("interval %d: offered %d received %d latency max %d ns: the halves' counts were not published", i, iv.Offered, iv.Received, iv.LatencyMaxNs)
			}
		}
	}
	if offered != tot.Sent || received != tot.Received {
		t.Errorf("intervals sum to %d offered, %d received; the trial sent %d, received %d", offered, received, tot.Sent, tot.Received)
	}
	if f := ivs[len(ivs)-1]; f.SentSoFar != tot.Sent || f.ReceivedSoFar != tot.Received {
		t.Errorf("final interval totals %d/%d, want %d/%d", f.SentSoFar, f.ReceivedSoFar, tot.Sent, tot.Received)
	}
}

// TestRemoteLimitTransient: port B's tester limit makes the trial's
// transient only when port B says all its reasons are stalls of its host
// (a trial the search may run again); otherwise it is the tester's ceiling.
func TestRemoteLimitTransient(t *testing.T) {
	for _, transient := range []bool{true, false} {
		lr := newLoopRemote()
		lr.limit = &RemoteResult{TesterLimited: true, TesterLimitReason: "stream 2: generator sent 90 of 100 planned frames in time", TesterLimitTransient: transient}
		e, err := NewRemote(RemoteConfig{Local: UDPPortConfig{Addr: lr.lo, Port: 42591}, SocketBuffer: 4 << 20}, lr)
		if err != nil {
			t.Fatal(err)
		}
		spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}, RateFPS: 1000, Duration: 200 * time.Millisecond, Settle: 50 * time.Millisecond}
		res, err := e.Run(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TesterLimited || res.TesterLimitTransient != transient || !strings.Contains(res.TesterLimitReason, "agent: stream 2: generator sent 90") {
			t.Errorf("port B transient %v: trial limited %v transient %v (%s)", transient, res.TesterLimited, res.TesterLimitTransient, res.TesterLimitReason)
		}
	}
}

// TestRemoteLostMidTrial: port B lost during a trial stops it at once
// (within the settle wait and the late grace, not at the trial's end);
// Run returns no counters, never a lossy result, and an error wrapping
// Remote.Err, and tells a lost port B nothing more.
func TestRemoteLostMidTrial(t *testing.T) {
	for _, dir := range []Direction{AtoB, BtoA} {
		t.Run(dir.String(), func(t *testing.T) {
			lr := newLoopRemote()
			e, err := NewRemote(RemoteConfig{Local: UDPPortConfig{Addr: lr.lo, Port: 42592}}, lr)
			if err != nil {
				t.Fatal(err)
			}
			errLost := errors.New("port B lost")
			spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: dir}}, RateFPS: 2000, Duration: 5 * time.Second, Settle: 100 * time.Millisecond}
			lost := time.AfterFunc(300*time.Millisecond, func() {
				lr.err = errLost
				close(lr.done)
			})
			defer lost.Stop()
			start := time.Now()
			res, err := e.Run(t.Context(), spec)
			took := time.Since(start)
			if !errors.Is(err, errLost) {
				t.Errorf("Run: %v, want an error wrapping Remote.Err", err)
			}
			if len(res.Streams) != 0 || res.TesterLimited {
				t.Errorf("result %+v, want no counters", res)
			}
			if took > 300*time.Millisecond+spec.Settle+LateGrace+500*time.Millisecond {
				t.Errorf("Run took %v after a loss at 300 ms, want it stopped at once", took)
			}
			if lr.stops != 0 {
				t.Errorf("%d Stop calls to a lost port B, want 0", lr.stops)
			}
			// Port B's own sockets (a real agent closes them when the
			// session ends).
			if lr.tx != nil {
				lr.tx.Stop()
			}
			lr.rx.Stop(nil)
		})
	}
}

// TestHalfIntervalsSkipEchoes: port A's receiver counts into its
// intervals the streams it receives, not the reflected copies of streams
// it sent (round-trip latency), which are no received traffic.
func TestHalfIntervalsSkipEchoes(t *testing.T) {
	spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}, RateFPS: 1000, Duration: time.Second,
		OnInterval: func(Interval) {}}
	src := netip.MustParseAddr("127.0.0.1")
	u, err := openUDPReceive(RemotePort{SocketBuffer: 1 << 20}, spec, spec.Streams[1:], RemoteReceive{
		Listen: netip.MustParseAddrPort("127.0.0.1:0"), From: src,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer u.r.conn.Close()
	ba := newStreamState(spec.Streams[1])
	rx := newRxTrial(5, spec.FrameSize, []*streamState{ba})
	rx.live = newLiveMeter()
	u.echo(rx, spec.Streams[:1], func(uint16) *streamState { return nil })
	u.start(rx)
	b := byHand(u, src)
	for seq, id := range []uint16{1, 1, 2, 1} {
		framing.EncodeSignature(b, framing.Signature{RunID: 5, StreamID: id, Seq: uint64(seq), TxNs: time.Now().UnixNano()})
		u.process(1)
	}
	if c := u.t.live.take(); c.received != 1 {
		t.Errorf("intervals counted %d frames, want 1 (the B->A frame, not the 3 echoes)", c.received)
	}
	if u.rtt[0].received != 3 || ba.received != 1 {
		t.Errorf("echoes %d, received %d: want 3 and 1", u.rtt[0].received, ba.received)
	}
}
