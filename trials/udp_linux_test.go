//go:build linux

package trials

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/sys/unix"
	"unsafe"
)

// loopbackUDP opens a UDP engine on loopback (no root needed) with ports
// unique to this process.
func loopbackUDP(t *testing.T) *UDPEngine {
	t.Helper()
	base := uint16(20000 + os.Getpid()%20000)
	cfg := UDPConfig{
		A: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1"), Addr6: netip.MustParseAddr("::1"), Port: base},
		B: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1"), Addr6: netip.MustParseAddr("::1"), Port: base + 1},
	}
	e, err := OpenUDP(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenUDP: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the udp engine: %v", err)
		}
	})
	return e
}

// TestUDPLoopback runs unidirectional, bidirectional and multi-flow trials,
// IPv4 and IPv6, between two UDP sockets on loopback: every datagram is
// counted once, timed by the kernel, and nothing is lost at a modest rate.
func TestUDPLoopback(t *testing.T) {
	e := loopbackUDP(t)
	tests := []struct {
		name    string
		size    int
		ipv6    bool
		streams []Stream
	}{
		{name: "ipv4 64 A->B", size: 64, streams: []Stream{{ID: 1, Direction: AtoB}}},
		{name: "ipv4 1518 bidirectional", size: 1518, streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}},
		{name: "ipv4 128 four flows", size: 128, streams: []Stream{{ID: 1, Direction: AtoB, Flows: 4}}},
		{name: "ipv6 84 bidirectional", size: 84, ipv6: true, streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA, Flows: 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 1 s: a 2-3 ms hiccup of this VM at the end of a 200 ms
			// trial put the offered rate 1.16 % below the intended one,
			// a tester limit (CI, 2026-12-01).
			spec := Spec{FrameSize: tt.size, IPv6: tt.ipv6, Streams: tt.streams, RateFPS: 20000, Duration: time.Second,
				Settle: 50 * time.Millisecond, TagAfter: 500 * time.Millisecond}
			var res Result
			for try := 0; ; try++ {
				var err error
				if res, err = e.Run(context.Background(), spec); err != nil {
					t.Fatalf("Run: %v", err)
				}
				// A stall of this host (the engine marks it
				// transient) runs the trial again, at most twice.
				if !res.TesterLimitTransient || try == 2 {
					break
				}
				t.Logf("run %d: transient tester limit (%s), running again", try+1, res.TesterLimitReason)
			}
			if res.Paths.Transport != "udp" || res.Paths.Timestamps != "kernel-sw" || (tt.size < 1000 && res.Paths.TX != "sendmmsg+udp_segment") {
				t.Errorf("paths %+v, want udp, kernel-sw timestamps, segmentation offload", res.Paths)
			}
			for _, s := range res.Streams {
				t.Logf("stream %d %v: sent %d received %d lost %d reordered %d dup %d offered %.0f fps latency p50 %d ns tagged %d ns",
					s.ID, s.Direction, s.Sent, s.Received, s.Lost, s.Reordered, s.Duplicate, s.OfferedFPS, s.Latency.P50Ns, s.TaggedLatencyNs)
				if s.Sent != 20000 || s.Received != s.Sent || s.Duplicate != 0 || s.Late != 0 {
					t.Errorf("stream %d: sent %d received %d dup %d late %d, want 20000 sent, all received once", s.ID, s.Sent, s.Received, s.Duplicate, s.Late)
				}
				if s.Latency.Count != s.Received || s.Latency.MinNs <= 0 || s.Latency.MaxNs > int64(time.Second) {
					t.Errorf("stream %d latency %+v: want every frame timed, positive and under 1 s", s.ID, s.Latency)
				}
				if s.TaggedLatencyNs <= 0 {
					t.Errorf("stream %d: tagged latency %d, want a positive value", s.ID, s.TaggedLatencyNs)
				}
			}
			if res.TesterLimited {
				t.Errorf("tester-limited: %s", res.TesterLimitReason)
			}
			if !res.Passed(0) {
				t.Errorf("trial did not pass at 0%% loss")
			}
		})
	}
}

// TestUDPRunErrors: bad specs are refused before any datagram is sent, with
// errors naming the field and the limit.
func TestUDPRunErrors(t *testing.T) {
	e := loopbackUDP(t)
	st := []Stream{{ID: 1, Direction: AtoB}}
	tests := []struct {
		name    string
		spec    Spec
		wantIs  error
		wantMin int
	}{
		{name: "ipv6 below 84", spec: Spec{FrameSize: 78, IPv6: true, Streams: st, RateFPS: 10, Duration: time.Millisecond}, wantIs: framing.ErrFrameTooSmall, wantMin: 84},
		{name: "ipv4 below 64", spec: Spec{FrameSize: 60, Streams: st, RateFPS: 10, Duration: time.Millisecond}, wantIs: framing.ErrFrameTooSmall, wantMin: 64},
		{name: "above path mtu", spec: Spec{FrameSize: 1519, Streams: st, RateFPS: 10, Duration: time.Millisecond}, wantIs: framing.ErrAboveMTU},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Run(context.Background(), tt.spec)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("Run: %v, want %v", err, tt.wantIs)
			}
			var fe *framing.FrameSizeError
			if tt.wantMin > 0 && (!errors.As(err, &fe) || fe.Limit != tt.wantMin) {
				t.Errorf("Run: %v, want the limit %d in a *framing.FrameSizeError", err, tt.wantMin)
			}
			t.Logf("%v", err)
		})
	}
}

func TestParseUDPControl(t *testing.T) {
	ts := unix.Timespec{Sec: 1700000000, Nsec: 123456789}
	var b []byte
	tsb := unsafe.Slice((*byte)(unsafeTimespec(&ts)), unsafe.Sizeof(ts))
	b = append(b, cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, tsb)...)
	b = append(b, cmsg(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, []byte{7, 0, 0, 0})...)
	tests := []struct {
		name         string
		in           []byte
		wantTs       int64
		wantOvfl     uint32
		okTs, okOvfl bool
	}{
		{name: "both", in: b, wantTs: 1700000000123456789, wantOvfl: 7, okTs: true, okOvfl: true},
		{name: "timestamp only", in: cmsg(unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, tsb), wantTs: 1700000000123456789, okTs: true},
		{name: "empty", in: nil},
		{name: "truncated", in: b[:10]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotTs, gotOvfl, okTs, okOvfl := parseUDPControl(tt.in)
			if gotTs != tt.wantTs || gotOvfl != tt.wantOvfl || okTs != tt.okTs || okOvfl != tt.okOvfl {
				t.Errorf("parseUDPControl = %d %d %v %v, want %d %d %v %v", gotTs, gotOvfl, okTs, okOvfl, tt.wantTs, tt.wantOvfl, tt.okTs, tt.okOvfl)
			}
		})
	}
	if n := testing.AllocsPerRun(1000, func() { parseUDPControl(b) }); n != 0 {
		t.Errorf("parseUDPControl allocates %v times, want 0", n)
	}
}

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafePointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// TestUDPReceiveAllocs: the receive path (recvmmsg through the poller,
// control messages, counting) allocates nothing per datagram; a batch of
// sendmmsg allocates nothing per datagram either.
func TestUDPReceiveAllocs(t *testing.T) {
	e := loopbackUDP(t)
	r := e.sides[1].rx[0]
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	tr := newRxTrial(1, 64, []*streamState{st})
	r.start(tr, framing.UDPPayloadSize(64, framing.IPv4UDP, false), -1)
	fl, err := openUDPFlow("", netip.MustParseAddr("127.0.0.1"), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), e.cfg.B.Port), 1<<20, 18, 32)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.conn.Close()
	s := &udpStreamTx{st: newStreamState(Stream{ID: 1, Direction: AtoB}), flows: []*udpFlow{fl}}
	tx := &udpTransmitter{streams: []*udpStreamTx{s}, runID: 1, cpu: -1}
	const batch = 32
	sendAllocs := testing.AllocsPerRun(200, func() {
		if err := tx.send(s, batch, time.Now().UnixNano()); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < batch; {
			r.n = 0
			if err := r.raw.Read(r.readFn); err != nil || r.errno != 0 {
				t.Fatalf("read: %v %v", err, r.errno)
			}
			r.process(r.n)
			got += r.n
		}
	})
	if sendAllocs >= 1 {
		t.Errorf("send + receive of a %d-datagram batch allocates %v times, want less than one per batch", batch, sendAllocs)
	}
	if st.received != s.st.sent || st.received == 0 {
		t.Errorf("received %d of %d sent", st.received, s.st.sent)
	}
	t.Logf("allocations per %d-datagram batch (sendmmsg + recvmmsg): %v", batch, sendAllocs)
}

func unsafeTimespec(ts *unix.Timespec) unsafe.Pointer { return unsafe.Pointer(ts) }
func unsafePointer(b *byte) unsafe.Pointer            { return unsafe.Pointer(b) }
