//go:build linux

package afxdp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// open opens a socket inside namespace ns; it skips the test only where
// the kernel lacks AF_XDP or XDP (not for a driver, privilege or other
// failure: those fail it).
func open(t testing.TB, ns string, cfg Config) *Socket {
	t.Helper()
	var s *Socket
	err := nsutil.Do(ns, func() error {
		var err error
		s, err = Open(cfg)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotSupported) && !errors.Is(err, os.ErrPermission) && kernelLacks(err) {
			t.Skipf("this kernel lacks AF_XDP/XDP: %v", err)
		}
		t.Fatalf("open %+v in %s: %v", cfg, ns, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// kernelLacks reports whether err says the kernel (not a driver or a
// privilege) is what is missing.
func kernelLacks(err error) bool {
	return bytes.Contains([]byte(err.Error()), []byte("the kernel"))
}

func (p *pair) template(t testing.TB, size int, dport uint16) *framing.Template {
	t.Helper()
	tpl, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: p.macA, DstMAC: p.macB,
		SrcIP: netip.MustParseAddr("198.18.0.1"), DstIP: netip.MustParseAddr("198.18.0.2"),
		DstPort: dport, FrameSize: size, UDPChecksum: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// TestSendReceive sends frames through AF_XDP on one end of a veth pair and
// receives them through AF_XDP on the other, in each XDP mode and with each
// receive stamp: every frame arrives once, byte for byte as sent, with a
// receive time after its transmit time, from the kernel's clock unless the
// stamp is StampUser; the counters agree. A stamp the kernel refuses
// (ProbeStamps) must fail Open with ErrNotSupported naming the refusal. With
// several templates of different sizes (a frame-size mix's pattern, 7 of
// them: not a divisor of the stream's chunks), frame n is template n mod 7,
// byte for byte.
func TestSendReceive(t *testing.T) {
	refused, err := ProbeStamps()
	if err != nil {
		t.Fatalf("probe the receive stamps: %v", err)
	}
	for _, tc := range []struct {
		mode  XDPMode
		want  string
		sizes []int
		stamp Stamp
	}{{XDPAuto, "native", []int{64}, StampAuto}, {XDPGeneric, "generic", []int{64}, StampAuto}, {XDPNative, "native", []int{1518}, StampAuto},
		{XDPAuto, "native", []int{64, 570, 64, 1518, 64, 570, 64}, StampAuto},
		{XDPAuto, "native", []int{MaxFrameSize(DefaultChunkSize)}, StampHead},
		{XDPAuto, "native", []int{64}, StampMeta}, {XDPGeneric, "generic", []int{64}, StampHead}, {XDPAuto, "native", []int{1518}, StampUser}} {
		name := strconv.Itoa(tc.sizes[0])
		if len(tc.sizes) > 1 {
			name = "mix"
		}
		t.Run(tc.mode.String()+"/"+tc.stamp.String()+"/"+name, func(t *testing.T) {
			p := newPair(t)
			if big := slices.Max(tc.sizes); big > 1518 {
				p.setMTU(t, big)
			}
			if why := refused[tc.stamp]; why != "" {
				err := nsutil.Do(p.nsB, func() error {
					s, err := Open(Config{Interface: p.ifB, RX: true, XDPMode: tc.mode, DstPort: 7, Stamp: tc.stamp})
					if err == nil {
						s.Close()
					}
					return err
				})
				if !errors.Is(err, ErrNotSupported) || err == nil || !strings.Contains(err.Error(), why) {
					t.Fatalf("open with the %v stamp the verifier refuses (%s): %v; want ErrNotSupported naming the refusal", tc.stamp, why, err)
				}
				t.Logf("refused as it should be: %v", err)
				return
			}
			rx := open(t, p.nsB, Config{Interface: p.ifB, RX: true, XDPMode: tc.mode, DstPort: 7, Stamp: tc.stamp})
			tx := open(t, p.nsA, Config{Interface: p.ifA, TX: true})
			f := rx.Features()
			t.Logf("rx: %v; tx: %v", f, tx.Features())
			if f.XDPMode != tc.want {
				t.Errorf("rx xdp mode %q, want %q (veth has native XDP)", f.XDPMode, tc.want)
			}
			wantStamp := map[Stamp]string{StampMeta: "xdp-meta", StampHead: "xdp-head", StampUser: "user"}[tc.stamp]
			if tc.stamp == StampAuto {
				wantStamp = "xdp-meta"
				if refused[StampMeta] != "" {
					wantStamp = "xdp-head"
				}
			}
			if f.RxTimestamp != wantStamp {
				t.Errorf("rx timestamp %q, want %q (refused here: %v)", f.RxTimestamp, wantStamp, refused)
			}
			var tpls []*framing.Template
			for _, size := range tc.sizes {
				tpls = append(tpls, p.template(t, size, 7))
			}
			if err := tx.PrepareTx([]TxStream{{ID: 5, Templates: tpls}}); err != nil {
				t.Fatal(err)
			}
			const n = 5000
			got := make([]bool, n)
			var nrx, bad int
			var maxLat time.Duration
			done := make(chan error, 1)
			go func() {
				frames := make([]Frame, 64)
				buf := make([]byte, 2048)
				deadline := time.Now().Add(10 * time.Second)
				for nrx < n && time.Now().Before(deadline) {
					k, err := rx.Receive(frames, 50*time.Millisecond)
					if err != nil {
						done <- err
						return
					}
					for _, fr := range frames[:k] {
						sig, _, err := framing.ParseFrame(fr.Data)
						if err != nil || sig.RunID != 9 || sig.StreamID != 5 || sig.Seq >= n || got[sig.Seq] {
							bad++
							continue
						}
						got[sig.Seq] = true
						nrx++
						m := tpls[sig.Seq%uint64(len(tpls))].WriteFrame(buf, sig)
						if !bytes.Equal(fr.Data, buf[:m]) {
							bad++
						}
						lat := time.Duration(fr.RxNs - sig.TxNs)
						if lat < -time.Millisecond || lat > 5*time.Second {
							t.Errorf("frame %d: receive time %d − transmit time %d = %v", sig.Seq, fr.RxNs, sig.TxNs, lat)
						}
						maxLat = max(maxLat, lat)
					}
				}
				done <- nil
			}()
			// 20 kframe/s: the receiver has 100 ms of ring to spare on a
			// busy box.
			res, err := tx.Generate(context.Background(), 0, 9, 20000, n*time.Second/20000, 64)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			st, err := rx.Stats()
			if err != nil {
				t.Fatal(err)
			}
			tst, _ := tx.Stats()
			t.Logf("sent %d (%.0f fps); received %d, bad %d, max latency %v; rx stats %+v; tx stats %+v", res.Sent, res.OfferedFPS, nrx, bad, maxLat, st, tst)
			if res.Sent != n || tst.TxCompleted != n {
				t.Errorf("sent %d, completed %d, want %d", res.Sent, tst.TxCompleted, n)
			}
			if nrx != n || bad != 0 {
				t.Errorf("received %d of %d frames intact (%d bad or duplicate); rx ring full %d, dropped %d", nrx, n, bad, st.RxRingFull, st.RxDropped)
			}
			userStamps := uint64(0)
			if f.RxTimestamp == "user" {
				userStamps = n
			}
			if st.RxFrames != uint64(n) || st.RxUserStamps != userStamps {
				t.Errorf("rx stats %+v: want %d frames, %d of them stamped by the receiver (rx timestamp %s)", st, n, userStamps, f.RxTimestamp)
			}
		})
	}
}

// TestForeignFramesReachKernel checks that with the XDP program attached
// (DstPort 7) the kernel still gets ARP and UDP that is not a test frame —
// a marker to another port, port 7 without the marker — and the socket
// gets none of it, while a test frame to port 7 goes to the socket only.
func TestForeignFramesReachKernel(t *testing.T) {
	p := newPair(t)
	rx := open(t, p.nsB, Config{Interface: p.ifB, RX: true, DstPort: 7})
	var c7, c9 *net.UDPConn
	if err := nsutil.Do(p.nsB, func() error {
		var err error
		if c7, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(198, 18, 0, 2), Port: 7}); err != nil {
			return err
		}
		c9, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(198, 18, 0, 2), Port: 9})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c7.Close()
	defer c9.Close()
	var out *net.UDPConn
	if err := nsutil.Do(p.nsA, func() error {
		var err error
		out, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(198, 18, 0, 1)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	marker := make([]byte, 32)
	framing.EncodeSignature(marker, framing.Signature{RunID: 1, StreamID: 1, Seq: 1})
	for _, m := range []struct {
		port    int
		payload []byte
		conn    *net.UDPConn
	}{{9, marker, c9}, {7, []byte("not a test frame, no marker"), c7}} {
		// The first datagram waits for ARP, which must reach B's kernel.
		if _, err := out.WriteToUDP(m.payload, &net.UDPAddr{IP: net.IPv4(198, 18, 0, 2), Port: m.port}); err != nil {
			t.Fatal(err)
		}
		m.conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 100)
		k, _, err := m.conn.ReadFromUDP(buf)
		if err != nil || !bytes.Equal(buf[:k], m.payload) {
			t.Errorf("port %d: the kernel socket got %q, %v; want the datagram (foreign frames must pass)", m.port, buf[:k], err)
		}
	}
	frames := make([]Frame, 8)
	if k, err := rx.Receive(frames, 200*time.Millisecond); k != 0 || err != nil {
		t.Errorf("the xdp socket received %d frames (%v), want none of the foreign frames", k, err)
	}

	// A test frame to port 7 goes to the socket, not to the kernel.
	tx := open(t, p.nsA, Config{Interface: p.ifA, TX: true})
	if err := tx.PrepareTx([]TxStream{{ID: 1, Templates: []*framing.Template{p.template(t, 64, 7)}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := tx.Send(0, 1, 1, 0, time.Now().UnixNano()); n != 1 || err != nil {
		t.Fatalf("send: %d, %v", n, err)
	}
	if _, err := tx.Flush(time.Second); err != nil {
		t.Fatal(err)
	}
	if k, err := rx.Receive(frames, 2*time.Second); k != 1 || err != nil {
		t.Errorf("the xdp socket received %d frames (%v), want the test frame", k, err)
	}
	c7.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if k, _, err := c7.ReadFromUDP(make([]byte, 100)); err == nil {
		t.Errorf("the kernel socket on port 7 got a %d-byte test frame; the xdp program should have redirected it", k)
	}
}

// TestSendReceiveAllocs checks the per-frame paths allocate nothing.
func TestSendReceiveAllocs(t *testing.T) {
	p := newPair(t)
	rx := open(t, p.nsB, Config{Interface: p.ifB, RX: true})
	tx := open(t, p.nsA, Config{Interface: p.ifA, TX: true})
	if err := tx.PrepareTx([]TxStream{{ID: 1, Templates: []*framing.Template{p.template(t, 64, 7), p.template(t, 64, 8)}}}); err != nil {
		t.Fatal(err)
	}
	var seq uint64
	if a := testing.AllocsPerRun(200, func() {
		n, err := tx.Send(0, 32, 1, seq, time.Now().UnixNano())
		if err != nil {
			t.Fatal(err)
		}
		seq += uint64(n)
	}); a != 0 {
		t.Errorf("Send: %v allocations per call, want 0", a)
	}
	frames := make([]Frame, 64)
	var got int
	if a := testing.AllocsPerRun(200, func() {
		k, err := rx.Receive(frames, 0)
		if err != nil {
			t.Fatal(err)
		}
		got += k
	}); a != 0 {
		t.Errorf("Receive: %v allocations per call, want 0", a)
	}
	if seq == 0 || got == 0 {
		t.Errorf("sent %d, received %d: the loops did nothing", seq, got)
	}
}

// TestZeroCopyOnVeth asks for zero-copy where the driver (veth) has none:
// the error must say so and suggest the raw transport, and copy mode must
// then work on the same interface.
func TestZeroCopyOnVeth(t *testing.T) {
	p := newPair(t)
	err := nsutil.Do(p.nsB, func() error {
		s, err := Open(Config{Interface: p.ifB, RX: true, CopyMode: ZeroCopyForce})
		if err == nil {
			s.Close()
		}
		return err
	})
	if err == nil {
		t.Fatal("zero-copy on veth opened; veth has no AF_XDP zero-copy")
	}
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "zero-copy") || !strings.Contains(err.Error(), "raw transport") {
		t.Errorf("error %q should wrap ErrNotSupported, name zero-copy and suggest the raw transport", err)
	}
	s := open(t, p.nsB, Config{Interface: p.ifB, RX: true, CopyMode: CopyForce})
	if f := s.Features(); f.ZeroCopy {
		t.Errorf("features %v: zero-copy in forced copy mode", f)
	}
}

// BenchmarkSend measures Send of 64-frame batches of 64-byte frames on a
// veth (copy mode): frames/s and allocations per batch.
func BenchmarkSend(b *testing.B) {
	p := newPair(b)
	tx := open(b, p.nsA, Config{Interface: p.ifA, TX: true})
	if err := tx.PrepareTx([]TxStream{{ID: 1, Templates: []*framing.Template{p.template(b, 64, 7)}}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var seq uint64
	for b.Loop() {
		n, err := tx.Send(0, 64, 1, seq, time.Now().UnixNano())
		if err != nil {
			b.Fatal(err)
		}
		seq += uint64(n)
	}
	if _, err := tx.Flush(time.Second); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(seq)/b.Elapsed().Seconds(), "frames/s")
}
