//go:build linux

package trials

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afpacket"
)

// TestQueueAllocs proves the per-frame transmit path (stamp into a ring
// slot) allocates nothing.
func TestQueueAllocs(t *testing.T) {
	tpl, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("198.18.1.2"), DstIP: netip.MustParseAddr("198.19.1.2"), FrameSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	p := &port{txRing: afpacket.NewMemRing(256, 1024)}
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	st.tpls = []*framing.Template{tpl, tpl}
	var stop atomic.Bool
	tx := newTransmitter(p, []*streamState{st}, 3, 64, &stop)
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := tx.queue(0, st, 8, 12345); err != nil {
			t.Fatal(err)
		}
		// Pretend the kernel sent them.
		for i := 0; i < 8; i++ {
			tx.ring.SetStatus((tx.tail+i)%tx.ring.Frames, afpacket.StatusAvailable)
		}
		tx.reclaim()
	}); n != 0 {
		t.Errorf("queue+reclaim allocate %v times per batch, want 0", n)
	}
	if st.sent != st.queued || st.sent == 0 {
		t.Errorf("sent %d of %d queued", st.sent, st.queued)
	}
	// The last frame in the ring decodes to the last sequence number.
	slot := (tx.head + tx.ring.Frames - 1) % tx.ring.Frames
	sig, _, err := framing.ParseFrame(tx.ring.TxData(slot)[:tpl.Len()])
	if err != nil || sig.Seq != st.queued-1 || sig.RunID != 3 || sig.TxNs != 12345 {
		t.Errorf("last frame signature %+v, %v; want seq %d run 3 tx 12345", sig, err, st.queued-1)
	}
}
