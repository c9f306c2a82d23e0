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
	u, err := StartUDPReceive(UDPHalfConfig{SocketBuffer: 1 << 20}, spec, 5, spec.Streams, UDPReceiveOptions{
		Listen: netip.MustParseAddrPort("127.0.0.1:0"), From: src,
		Reflect: sink.LocalAddr().(*net.UDPAddr).AddrPort(), ReflectFPS: 1e9,
	})
	if err != nil {
		t.Fatal(err)
	}
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
	var seq uint64
	allocs := testing.AllocsPerRun(200, func() {
		framing.EncodeSignature(r.bufs[0][:n], framing.Signature{RunID: 5, StreamID: 1, Seq: seq, TxNs: time.Now().UnixNano()})
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
