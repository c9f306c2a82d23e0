//go:build linux

package trials

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

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

// TestDueCatchUp drives the transmit loop's pacing step through a stall
// early in the trial and one too late to spread: the stream's result records
// the lag, the peak overspeed (spread) and the frames sent back to back at
// the end, and the step allocates nothing.
func TestDueCatchUp(t *testing.T) {
	const fps = 12000
	for _, tt := range []struct {
		name      string
		at        time.Duration
		wantBurst bool
	}{
		{name: "absorbed", at: 200 * time.Millisecond},
		{name: "too late", at: 995 * time.Millisecond, wantBurst: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := newStreamState(Stream{ID: 1})
			st.pacer = NewDurationPacer(fps, time.Second, nil, pacedBatch)
			var el time.Duration
			stalled := false
			for {
				if !stalled && el >= tt.at {
					el += 4 * time.Millisecond
					stalled = true
				}
				n, w, ok := st.due(el, int64(el)+1, 0)
				if !ok {
					break
				}
				st.queued += uint64(n)
				st.sent = st.queued
				el += w + time.Microsecond
			}
			r := st.result(fps)
			if r.MaxLagNs < int64(4*time.Millisecond) || r.MaxLagNs > int64(5*time.Millisecond) {
				t.Errorf("MaxLagNs %v, want about the 4 ms stall", time.Duration(r.MaxLagNs))
			}
			if r.CatchUpOverspeed <= 0 || r.CatchUpOverspeed > DefaultMaxOverspeed {
				t.Errorf("CatchUpOverspeed %v, want (0, %v]", r.CatchUpOverspeed, DefaultMaxOverspeed)
			}
			if got := r.CatchUpBurstFrames > 0; got != tt.wantBurst {
				t.Errorf("CatchUpBurstFrames %d, want a burst: %v", r.CatchUpBurstFrames, tt.wantBurst)
			}
			if r.Sent != st.pacer.Total {
				t.Errorf("sent %d of %d", r.Sent, st.pacer.Total)
			}
		})
	}
	st := newStreamState(Stream{ID: 1})
	st.pacer = NewDurationPacer(fps, time.Second, nil, pacedBatch)
	st.catch = CatchUp{Sent: 100, Due: 200, Overspeed: 0.05}
	if n := testing.AllocsPerRun(1000, func() {
		st.due(300*time.Millisecond, 1, 0)
	}); n != 0 {
		t.Errorf("due allocates %v times per call, want 0", n)
	}
}
