//go:build linux

package afxdp

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/sys/unix"
)

// fakeTx is a TX-only socket on rings in ordinary memory whose kernel side
// the test plays: it takes descriptors off the TX ring and completes them
// when told. Its flags word is 0, so kick makes no system call.
type fakeTx struct {
	s                *Socket
	txCtl, compCtl   [3]uint32
	kernTx, kernComp ring
}

func newFakeTx(t *testing.T, n int) *fakeTx {
	t.Helper()
	f := &fakeTx{}
	cfg := Config{Interface: "fake", TX: true, Frames: n, RingSize: n}.withDefaults()
	s := &Socket{cfg: cfg, fd: -1, umem: make([]byte, n*cfg.ChunkSize), txChunks: n}
	s.tx = &descRing{ring: memRing(n, &f.txCtl), descs: make([]unix.XDPDesc, n)}
	s.comp = &addrRing{ring: memRing(n, &f.compCtl), addrs: make([]uint64, n)}
	f.kernTx, f.kernComp = memRing(n, &f.txCtl), memRing(n, &f.compCtl)
	tpl, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("198.18.0.1"), DstIP: netip.MustParseAddr("198.18.0.2"), FrameSize: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTx([]TxStream{{ID: 1, Templates: []*framing.Template{tpl}}}); err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

// take plays the kernel taking every queued descriptor off the TX ring (it
// hands the frames to the device) and returns their addresses.
func (f *fakeTx) take() []uint64 {
	n := f.kernTx.avail(f.kernTx.size)
	var addrs []uint64
	for i := range n {
		addrs = append(addrs, f.s.tx.descs[(f.kernTx.cachedCons+i)&f.kernTx.mask].Addr)
	}
	f.kernTx.release(n)
	return addrs
}

// complete plays the kernel completing frames (on a veth: when the peer is
// done with them).
func (f *fakeTx) complete(addrs []uint64) {
	for i, a := range addrs {
		f.s.comp.addrs[(f.kernComp.cachedProd+uint32(i))&f.kernComp.mask] = a
	}
	f.kernComp.submit(uint32(len(addrs)))
}

// TestFlushTakenBeforeCompletion: Flush reports when the kernel took the
// last frame off the TX ring, not when the last completion came back (on a
// veth, the DUT's time): taken falls between the kernel's take and its
// completions, 200 ms later, and Flush returns after the completions; a
// kernel that takes the frames only after 50 ms moves taken with it.
func TestFlushTakenBeforeCompletion(t *testing.T) {
	for _, tc := range []struct {
		name           string
		takeAt, compAt time.Duration
	}{
		{"taken at once, completed late", 0, 200 * time.Millisecond},
		{"taken late", 50 * time.Millisecond, 250 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeTx(t, 64)
			if k, err := f.s.Send(0, 10, 1, 0, time.Now().UnixNano()); err != nil || k != 10 {
				t.Fatalf("Send: %d, %v", k, err)
			}
			var tookNs, compNs atomic.Int64
			start := time.Now()
			go func() {
				time.Sleep(tc.takeAt)
				// Stamped before the take: Flush may see the ring
				// released and stamp its taken before this goroutine
				// reads the clock again (CI on 2026-12-02: taken 0.3 µs
				// before a stamp read after the take).
				tookNs.Store(time.Now().UnixNano())
				addrs := f.take()
				time.Sleep(tc.compAt - tc.takeAt)
				compNs.Store(time.Now().UnixNano())
				f.complete(addrs)
			}()
			taken, err := f.s.Flush(2 * time.Second)
			end := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			took, comp := time.Unix(0, tookNs.Load()), time.Unix(0, compNs.Load())
			if compNs.Load() == 0 || end.Before(comp) {
				t.Errorf("Flush returned %v after it began, before the completions", end.Sub(start))
			}
			if taken.IsZero() || taken.Before(took) || !taken.Before(comp) {
				t.Errorf("taken %v after Flush began; want from the kernel's take (%v) to before its completions (%v)",
					taken.Sub(start), took.Sub(start), comp.Sub(start))
			}
			if n := f.s.InFlight(); n != 0 {
				t.Errorf("%d frames in flight after Flush", n)
			}
		})
	}
}
