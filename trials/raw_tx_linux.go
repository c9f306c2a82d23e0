//go:build linux

package trials

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afpacket"
	"golang.org/x/sys/unix"
)

// transmitter sends the streams of one port. It runs on one goroutine locked
// to its OS thread.
//
// Transmit timestamps: the clock (CLOCK_REALTIME, the clock of the kernel's
// receive timestamps) is read once per batch, just before the batch is
// written into the ring, and every frame of the batch carries that reading.
// A frame's stamp is therefore at most one batch-build-and-send time (a few
// µs at 256 frames) before it really left; when the ring was full and the
// sender had to wait, the clock is read again after the wait.
type transmitter struct {
	p       *port
	ring    *afpacket.Ring
	streams []*streamState
	runID   uint8
	batch   int
	// hardStop ends sending even if frames are still planned (the
	// generator fell behind); 0 means none.
	hardStop time.Duration
	tagAfter time.Duration
	stop     *atomic.Bool
	cpu      int // CPU to pin the sending thread to, or -1

	head, tail, pending int
	slotStream          []int32
	slotTpl             []*framing.Template
	buf                 []byte // sendto path
	flowIdx             []int
	kickErrs            uint64
	press               txPressure // back-pressure measurements (backpressure_linux.go)
}

func newTransmitter(p *port, streams []*streamState, runID uint8, batch int, stop *atomic.Bool) *transmitter {
	t := &transmitter{p: p, ring: p.txRing, streams: streams, runID: runID, batch: batch, stop: stop, cpu: -1,
		flowIdx: make([]int, len(streams))}
	if t.ring != nil {
		if len(p.txSlotTpl) != t.ring.Frames {
			p.txSlotTpl = make([]*framing.Template, t.ring.Frames)
			p.txHead = 0
		}
		// The kernel walks the ring from where the last trial stopped.
		t.head, t.tail = p.txHead, p.txHead
		t.slotStream = make([]int32, t.ring.Frames)
		t.slotTpl = p.txSlotTpl
		// Write the first stream's frame into every free slot before the
		// clock starts, so sending only stamps signatures from the first
		// frame on.
		if len(streams) > 0 && len(streams[0].tpls) > 0 {
			tpl := streams[0].tpls[0]
			for i := range t.slotTpl {
				if t.slotTpl[i] != tpl && t.ring.Status(i) == afpacket.StatusAvailable {
					tpl.CopyTo(t.ring.TxData(i))
					t.ring.SetTxLen(i, tpl.Len())
					t.slotTpl[i] = tpl
				}
			}
		}
	} else {
		t.buf = make([]byte, framing.MaxJumbo)
	}
	return t
}

// run sends until every stream's pacer is done, the hard stop passes or stop
// is set. It returns an error only when the kernel refuses the port itself.
func (t *transmitter) run() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer txThread(t.cpu)()
	t.press.begin()
	defer t.press.end()
	err := paceLoop(t, t.streams, t.hardStop, t.tagAfter, t.stop)
	t.p.txHead = t.head
	return err
}

var _ batchSender = (*transmitter)(nil)

// push hands the frames queued in the ring to the kernel without waiting,
// then reclaims the slots it has sent.
func (t *transmitter) push() error {
	if err := t.kick(false); err != nil {
		return err
	}
	t.reclaim()
	return nil
}

// idle reclaims the slots the kernel has sent.
func (t *transmitter) idle() { t.reclaim() }

// queue writes n frames of stream i stamped ns into the ring (or sends them
// with sendto) and returns the stamp in force at the end (re-read when the
// sender had to wait for ring space).
func (t *transmitter) queue(i int, s *streamState, n int, ns int64) (int64, error) {
	if t.ring == nil {
		return ns, t.sendEach(s, i, n, ns)
	}
	r := t.ring
	for k := 0; k < n; k++ {
		if t.pending == r.Frames {
			if err := t.waitRoom(); err != nil {
				return ns, err
			}
			ns = time.Now().UnixNano()
		}
		tpl := s.tpls[t.flowIdx[i]]
		if len(s.tpls) > 1 {
			t.flowIdx[i] = (t.flowIdx[i] + 1) % len(s.tpls)
		}
		slot := t.head
		data := r.TxData(slot)
		sig := framing.Signature{RunID: t.runID, StreamID: s.spec.ID, Seq: s.queued, TxNs: ns}
		var ln int
		if t.slotTpl[slot] == tpl {
			tpl.Stamp(data, sig) // the slot still holds this template's frame
			ln = tpl.Len()
		} else {
			ln = tpl.WriteFrame(data, sig)
			t.slotTpl[slot] = tpl
		}
		r.SetTxLen(slot, ln)
		t.slotStream[slot] = int32(i)
		r.RequestSend(slot)
		s.queued++
		s.lastNs = ns
		t.pending++
		t.head++
		if t.head == r.Frames {
			t.head = 0
		}
	}
	return ns, nil
}

// sendEach is the sendto path: one syscall per frame; a frame whose send
// fails is counted failed, never sent.
func (t *transmitter) sendEach(s *streamState, i, n int, ns int64) error {
	for k := 0; k < n; k++ {
		tpl := s.tpls[t.flowIdx[i]]
		if len(s.tpls) > 1 {
			t.flowIdx[i] = (t.flowIdx[i] + 1) % len(s.tpls)
		}
		ln := tpl.WriteFrame(t.buf, framing.Signature{RunID: t.runID, StreamID: s.spec.ID, Seq: s.queued, TxNs: ns})
		s.queued++
		s.lastNs = ns
		if err := t.p.tx.Send(t.buf[:ln]); err != nil {
			if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
				s.failed++
				continue
			}
			s.failed++
			return fmt.Errorf("%s: send: %w", t.p.where(), err)
		}
		s.sent++
	}
	return nil
}

// kick hands the ring's pending frames to the kernel. Transient refusals
// (ENOBUFS: the device dropped a frame, which the kernel re-queues; EAGAIN:
// send buffer full) leave the frames pending for the next kick.
func (t *transmitter) kick(wait bool) error {
	if t.ring == nil || t.pending == 0 {
		return nil
	}
	err := t.p.tx.Kick(wait)
	t.press.kicked(err != nil)
	if err == nil || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) {
		if err != nil {
			t.kickErrs++
		}
		return nil
	}
	return fmt.Errorf("%s: transmit: %w", t.p.where(), err)
}

// reclaim walks completed slots from the tail, counting each frame sent (or
// failed when the kernel marked it malformed).
func (t *transmitter) reclaim() {
	r := t.ring
	if r == nil {
		return
	}
	for t.pending > 0 {
		st := r.Status(t.tail)
		if st&(afpacket.StatusSendRequest|afpacket.StatusSending) != 0 {
			return
		}
		s := t.streams[t.slotStream[t.tail]]
		if st&afpacket.StatusWrongFormat != 0 {
			s.failed++
			r.SetStatus(t.tail, afpacket.StatusAvailable)
		} else {
			s.sent++
		}
		t.pending--
		t.tail++
		if t.tail == r.Frames {
			t.tail = 0
		}
	}
}

// waitRoom kicks and waits until at least one slot is free.
func (t *transmitter) waitRoom() error {
	defer t.press.ringFull(time.Now())
	for spins := 0; t.pending == t.ring.Frames; spins++ {
		if err := t.kick(false); err != nil {
			return err
		}
		t.reclaim()
		if t.pending < t.ring.Frames {
			return nil
		}
		if spins > 16 {
			sleep(20 * time.Microsecond)
		}
	}
	return nil
}

// flush sends what is still pending and waits (up to 2 s) for the kernel to
// release every slot. Frames it never took are withdrawn and counted failed.
//
// Frames are stamped when queued; a kernel that refuses to take them (a
// full send buffer: back-pressure) takes the last of them later, and the
// offered load is measured to when it did: the first kick that returns
// without a refusal, after which no frame waits in the ring (sendto hands
// every requested frame to the device before it returns). The release of
// the slots that follows is not part of it: on a veth the kernel keeps a
// frame's slot until the DUT is done with the frame, queue included (tens
// of ms behind a full DUT queue), which is the DUT's time, not the tester's.
func (t *transmitter) flush() error {
	if t.ring == nil {
		return nil
	}
	t0 := time.Now()
	deadline := t0.Add(2 * time.Second)
	waited := t.pending > 0
	var takenNs int64 // when the kernel had taken every frame; 0 = not yet
	for t.pending > 0 && time.Now().Before(deadline) {
		refused := t.kickErrs
		if err := t.kick(false); err != nil {
			return err
		}
		if takenNs == 0 && t.kickErrs == refused {
			takenNs = time.Now().UnixNano()
		}
		t.reclaim()
		if t.pending > 0 {
			sleep(50 * time.Microsecond)
		}
	}
	if waited && t.pending == 0 {
		if takenNs == 0 {
			takenNs = time.Now().UnixNano()
		}
		// The time the kernel took to accept the last frames after they
		// were queued (a refusing kernel: back-pressure).
		t.press.drained(takenNs - t0.UnixNano())
		for _, s := range t.streams {
			if s.queued > 0 {
				s.drainNs = max(s.drainNs, takenNs)
			}
		}
	}
	// Withdraw leftovers: no sendto is running, so the kernel will not
	// touch slots still marked SendRequest.
	for t.pending > 0 {
		st := t.ring.Status(t.tail)
		s := t.streams[t.slotStream[t.tail]]
		if st&afpacket.StatusSending != 0 {
			// Owned by a driver that never completed it: count it
			// failed and leave it; the ring is unusable for this slot.
			s.failed++
		} else if st&afpacket.StatusSendRequest != 0 || st&afpacket.StatusWrongFormat != 0 {
			s.failed++
			t.ring.SetStatus(t.tail, afpacket.StatusAvailable)
		} else {
			s.sent++
		}
		t.pending--
		t.tail = (t.tail + 1) % t.ring.Frames
	}
	return nil
}
