//go:build linux

package trials

import (
	"net/netip"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rfc2544/rfc2544/framing"
)

// TestHalfIntervalsSumToTotals: a two-host trial's halves (here both on
// loopback) report one interval per second while the trial runs, marked
// Partial, with the traffic this host saw in each, and a final whole one;
// the intervals add up exactly to the trial's Sent and Received.
func TestHalfIntervalsSumToTotals(t *testing.T) {
	var mu sync.Mutex
	var ivs []Interval
	spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: 5000, Duration: 2500 * time.Millisecond,
		Settle: 100 * time.Millisecond,
		OnInterval: func(iv Interval) {
			mu.Lock()
			ivs = append(ivs, iv)
			mu.Unlock()
		}}
	lo := netip.MustParseAddr("127.0.0.1")
	cfg := udpHalfConfig{SocketBuffer: 4 << 20}
	rx, err := startUDPReceive(cfg, spec, 7, spec.Streams, udpReceiveOptions{Listen: netip.AddrPortFrom(lo, 0), From: lo})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tx, err := startUDPSend(t.Context(), cfg, spec, 7, spec.Streams, udpSendOptions{Src: lo, Dst: netip.AddrPortFrom(lo, rx.Port())})
	if err != nil {
		rx.Stop(nil)
		t.Fatal(err)
	}
	h := startHalfIntervals(spec, start, tx, rx)
	<-tx.Done()
	time.Sleep(spec.Settle)
	sr, err := tx.Stop()
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rx.Stop(map[uint16]uint64{1: sr.Streams[0].Sent})
	if err != nil {
		t.Fatal(err)
	}
	res := Result{Streams: []StreamResult{{ID: 1, Sent: sr.Streams[0].Sent, Received: rr.Streams[0].Received}}}
	h.Finish(res)
	h.Stop() // after Finish: nothing

	mu.Lock()
	defer mu.Unlock()
	t.Logf("sent %d received %d; intervals %+v", res.Streams[0].Sent, res.Streams[0].Received, ivs)
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
	if offered != res.Streams[0].Sent || received != res.Streams[0].Received {
		t.Errorf("intervals sum to %d offered, %d received; the trial sent %d, received %d", offered, received, res.Streams[0].Sent, res.Streams[0].Received)
	}
	if f := ivs[len(ivs)-1]; f.SentSoFar != res.Streams[0].Sent || f.ReceivedSoFar != res.Streams[0].Received {
		t.Errorf("final interval totals %d/%d, want %d/%d", f.SentSoFar, f.ReceivedSoFar, res.Streams[0].Sent, res.Streams[0].Received)
	}
}

// TestHalfIntervalsSkipEchoes: a receive half counts into its intervals
// the streams it receives, not the reflected copies of streams it sent
// (round-trip latency), which are no received traffic.
func TestHalfIntervalsSkipEchoes(t *testing.T) {
	spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}, RateFPS: 1000, Duration: time.Second,
		OnInterval: func(Interval) {}}
	src := netip.MustParseAddr("127.0.0.1")
	u, err := startUDPReceive(udpHalfConfig{SocketBuffer: 1 << 20}, spec, 5, spec.Streams[1:], udpReceiveOptions{
		Listen: netip.MustParseAddrPort("127.0.0.1:0"), From: src, RoundTrip: spec.Streams[:1],
	})
	if err != nil {
		t.Fatal(err)
	}
	defer u.r.conn.Close()
	// Stop the receive loop and drive process by hand.
	u.r.conn.SetReadDeadline(time.Now())
	<-u.done
	r := u.r
	n := framing.UDPPayloadSize(128, framing.IPv4UDP, false)
	framing.FillPayload(r.bufs[0][:n])
	r.hdrs[0].n = uint32(n)
	r.hdrs[0].hdr.SetControllen(0)
	sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&u.names[0][0]))
	sa.Family, sa.Addr = unix.AF_INET, src.As4()
	for seq, id := range []uint16{1, 1, 2, 1} {
		framing.EncodeSignature(r.bufs[0][:n], framing.Signature{RunID: 5, StreamID: id, Seq: uint64(seq), TxNs: time.Now().UnixNano()})
		u.process(1)
	}
	if c := u.t.live.take(); c.received != 1 {
		t.Errorf("intervals counted %d frames, want 1 (the B->A frame, not the 3 echoes)", c.received)
	}
	if u.rtt[0].received != 3 || u.streams[0].received != 1 {
		t.Errorf("echoes %d, received %d: want 3 and 1", u.rtt[0].received, u.streams[0].received)
	}
}
