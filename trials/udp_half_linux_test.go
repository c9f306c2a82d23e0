//go:build linux

package trials

import (
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/sys/unix"
)

// TestUDPReceiveProcessAllocs: counting and reflecting a datagram (the
// per-frame path of the two-host receive half) allocates nothing.
func TestUDPReceiveProcessAllocs(t *testing.T) {
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: 1000, Duration: time.Second}
	src := netip.MustParseAddr("127.0.0.1")
	u, err := startUDPReceive(RemotePort{SocketBuffer: 1 << 20}, spec, 5, spec.Streams, RemoteReceive{
		Listen: netip.MustParseAddrPort("127.0.0.1:0"), From: src,
		Reflect: sink.LocalAddr().(*net.UDPAddr).AddrPort(), ReflectFPS: 1e9,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := byHand(u, src)
	var seq uint64
	allocs := testing.AllocsPerRun(200, func() {
		framing.EncodeSignature(b, framing.Signature{RunID: 5, StreamID: 1, Seq: seq, TxNs: time.Now().UnixNano()})
		seq++
		u.process(1)
	})
	if allocs != 0 {
		t.Errorf("process allocates %.1f times per datagram, want 0", allocs)
	}
	if u.reflected == 0 || u.streams[0].received == 0 {
		t.Errorf("reflected %d received %d: the path under test did not run", u.reflected, u.streams[0].received)
	}
	u.r.conn.Close()
}

// TestUDPReceiveBufferBound: the kernel never writes past a receive buffer,
// whatever frame size a trial names. The buffers get 64 KiB of guard bytes
// after them (inside the same allocation, so a failure is a failed check,
// not a corrupted heap); a receiver started for the payload of a 65,000-byte
// frame (what a controller once asked for) is sent 65,000-byte datagrams
// from a foreign address and from its peer, and every guard byte must be
// intact, every iovec within its buffer.
func TestUDPReceiveBufferBound(t *testing.T) {
	const guard = 64 << 10
	r, err := openUDPReceiver("", netip.MustParseAddrPort("127.0.0.1:0"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.conn.Close()
	bufLen := framing.MaxJumbo + 1
	bigs := make([][]byte, len(r.bufs))
	for i := range r.bufs {
		bigs[i] = make([]byte, bufLen+guard)
		for j := bufLen; j < len(bigs[i]); j++ {
			bigs[i][j] = 0xA5
		}
		r.bufs[i] = bigs[i][:bufLen:bufLen]
		r.iovs[i].Base = &r.bufs[i][0] // as openUDPReceiver did before start set it
	}
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	tr := newRxTrial(1, 65000, []*streamState{st})
	r.start(tr, framing.UDPPayloadSize(65000, framing.IPv4UDP, false), -1)
	for i := range r.iovs {
		if r.iovs[i].Base != &r.bufs[i][0] || int(r.iovs[i].Len) > cap(r.bufs[i]) || int(r.iovs[i].Len) != len(r.bufs[i]) {
			t.Fatalf("iovec %d: base %p len %d, buffer %p len %d cap %d", i, r.iovs[i].Base, r.iovs[i].Len, &r.bufs[i][0], len(r.bufs[i]), cap(r.bufs[i]))
		}
	}
	var got int
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.readLoop(func(n int) { got += n })
	}()
	dst := r.conn.LocalAddr().(*net.UDPAddr)
	big := make([]byte, 65000)
	for i := range big {
		big[i] = 0x5A
	}
	for _, src := range []string{"127.0.0.3", "127.0.0.1"} {
		c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.ParseIP(src)}, dst)
		if err != nil {
			t.Fatal(err)
		}
		for range 640 {
			if _, err := c.Write(big); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		_ = r.raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.conn.SetReadDeadline(time.Now())
	<-done
	if got == 0 {
		t.Fatal("no datagram read: the test sent nothing the receiver saw")
	}
	for i, b := range bigs {
		for j := bufLen; j < len(b); j++ {
			if b[j] != 0xA5 {
				t.Fatalf("buffer %d: guard byte %d after the %d-byte buffer overwritten (%d datagrams read)", i, j-bufLen, bufLen, got)
			}
		}
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
}

// TestUDPReceiveSourceFilter: datagrams from anywhere but the peer are
// dropped by the kernel (a socket filter) before they are queued, so a
// stranger's flood never reaches the receive buffers; the peer's are
// counted. IPv4 and IPv6.
func TestUDPReceiveSourceFilter(t *testing.T) {
	for _, tc := range []struct{ listen, peer, stranger string }{
		{"127.0.0.1:0", "127.0.0.1", "127.0.0.3"},
		{"[::1]:0", "::1", ""},
	} {
		spec := Spec{FrameSize: 128, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: 1000, Duration: time.Second}
		proto := framing.IPv4UDP
		if tc.stranger == "" {
			spec.IPv6, proto = true, framing.IPv6UDP
		}
		// The IPv6 case filters for a peer that is not ::1, so ::1 is the stranger.
		peer := netip.MustParseAddr(tc.peer)
		if tc.stranger == "" {
			peer = netip.MustParseAddr("2001:2::1")
		}
		// Counted frames are reflected to sink: the test waits for the
		// peer's frame there before it stops the receiver.
		sink, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddrPort(tc.listen).Addr(), 0)))
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Close()
		u, err := startUDPReceive(RemotePort{SocketBuffer: 1 << 20}, spec, 5, spec.Streams, RemoteReceive{
			Listen: netip.MustParseAddrPort(tc.listen), From: peer, Reflect: sink.LocalAddr().(*net.UDPAddr).AddrPort(), ReflectFPS: 1e6})
		if err != nil {
			if tc.stranger == "" {
				t.Logf("no IPv6 loopback: %v", err)
				continue
			}
			t.Fatal(err)
		}
		dst := net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddrPort(tc.listen).Addr(), u.Port()))
		payload := make([]byte, framing.UDPPayloadSize(128, proto, false))
		framing.FillPayload(payload)
		send := func(src string, seq uint64) {
			c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, dst)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			framing.EncodeSignature(payload, framing.Signature{RunID: 5, StreamID: 1, Seq: seq, TxNs: time.Now().UnixNano()})
			if _, err := c.Write(payload); err != nil {
				t.Fatal(err)
			}
		}
		stranger := tc.stranger
		if stranger == "" {
			stranger = "::1"
		}
		for i := range 100 {
			send(stranger, uint64(i))
		}
		if tc.stranger != "" {
			send(tc.peer, 100)
			sink.SetReadDeadline(time.Now().Add(5 * time.Second))
			b := make([]byte, 2048)
			n, _, err := sink.ReadFrom(b)
			if err != nil {
				t.Fatalf("the peer's frame was not counted: %v", err)
			}
			if sig, err := framing.DecodeSignature(b[:n]); err != nil || sig.Seq != 100 {
				t.Errorf("reflected %+v (%v), want the peer's frame 100", sig, err)
			}
		}
		res, err := u.Stop(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := uint64(1)
		if tc.stranger == "" {
			want = 0
		}
		if u.foreignSrc != 0 || res.Streams[0].Received != want {
			t.Errorf("%s: %d strangers' datagrams reached the socket, %d counted; want 0 and %d", tc.listen, u.foreignSrc, res.Streams[0].Received, want)
		}
	}
}

// byHand stops u's receive loop and readies datagram 0 of its batch as a
// 128-byte frame's payload from src (IPv4), for tests that drive process
// by hand; it returns the payload to sign.
func byHand(u *udpReceive, src netip.Addr) []byte {
	u.r.conn.SetReadDeadline(time.Now())
	<-u.done
	r := u.r
	n := framing.UDPPayloadSize(128, framing.IPv4UDP, false)
	framing.FillPayload(r.bufs[0][:n])
	r.hdrs[0].n = uint32(n)
	r.hdrs[0].hdr.SetControllen(0)
	sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&u.names[0][0]))
	sa.Family, sa.Addr = unix.AF_INET, src.As4()
	return r.bufs[0][:n]
}
