//go:build linux

package afxdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/sys/unix"
)

// TxStream is one stream to send: its ID (the signature's StreamID) and
// the templates it cycles through, built once by package framing: the
// socket's k-th frame of the stream (sequence number seq, k = seq/stride
// in SendStride) is template k mod len(Templates), one per flow, or per
// place in a frame-size mix's pattern and flow.
type TxStream struct {
	ID        uint16
	Templates []*framing.Template
}

// txStream is a stream's share of the TX chunks: chunks [first, first+n),
// chunk first+k holding template cur[k], and a FIFO of the free ones. n is
// a multiple of len(tpls) where the share allows it, so that, the chunks
// coming back in order, chunk first+k always carries frames whose template
// is k mod len(tpls) and is never rewritten.
type txStream struct {
	id          uint16
	tpls        []*framing.Template
	first, n    int
	free        []uint64 // UMEM offsets of free chunks, a ring of n entries
	head, nfree int
	cur         []uint32 // the template each chunk holds
}

type txState struct {
	streams     []txStream
	perStream   int
	txQueued    uint64
	txCompleted uint64
	// txDeviceDrops counts frames the device dropped on transmit (the
	// kernel's EBUSY answer to a copy-mode wake-up: one frame each).
	txDeviceDrops uint64
	// txRefused counts wake-ups the kernel refused with frames still
	// queued (EAGAIN, ENOBUFS: the device's queue stopped, the path
	// holding the sender back).
	txRefused uint64
}

// TxCounters returns the wake-ups the kernel refused (the device's queue
// stopped) and the frames the device dropped on transmit, since Open. It
// does not allocate or make a system call.
func (s *Socket) TxCounters() (refused, deviceDrops uint64) { return s.txRefused, s.txDeviceDrops }

func (s *Socket) initTx() {}

// PrepareTx splits the TX chunks evenly between streams and writes each
// stream's templates into its chunks once; Send then only stamps the
// signature in place. It replaces any earlier preparation and must not be
// called while frames are in flight.
func (s *Socket) PrepareTx(streams []TxStream) error {
	if s.tx == nil {
		return errors.New("afxdp: prepare tx: the socket was opened without TX")
	}
	if s.txQueued != s.txCompleted {
		return fmt.Errorf("afxdp: prepare tx: %d frames still in flight; call Flush first", s.txQueued-s.txCompleted)
	}
	if len(streams) == 0 || len(streams) > s.txChunks {
		return fmt.Errorf("afxdp: prepare tx: %d streams for %d tx chunks; give 1 to %d streams", len(streams), s.txChunks, s.txChunks)
	}
	per := s.txChunks / len(streams)
	max := MaxFrameSize(s.cfg.ChunkSize)
	out := make([]txStream, len(streams))
	for i, st := range streams {
		if len(st.Templates) == 0 {
			return fmt.Errorf("afxdp: prepare tx: stream %d has no templates", st.ID)
		}
		for _, t := range st.Templates {
			if t.FrameSize() > max {
				return fmt.Errorf("afxdp: prepare tx: stream %d frame size %d: above the %d bytes a %d-byte chunk carries; set ChunkSize 4096 or use the raw transport for jumbo frames",
					st.ID, t.FrameSize(), max, s.cfg.ChunkSize)
			}
		}
		n := per
		if l := len(st.Templates); l > 1 && l <= per {
			n -= per % l
		}
		ts := txStream{id: st.ID, tpls: st.Templates, first: i * per, n: n, free: make([]uint64, n), nfree: n, cur: make([]uint32, n)}
		for k := range n {
			addr := uint64((ts.first + k) * s.cfg.ChunkSize)
			ts.free[k] = addr
			ts.cur[k] = uint32(k % len(ts.tpls))
			ts.tpls[ts.cur[k]].CopyTo(s.umem[addr : addr+uint64(s.cfg.ChunkSize)])
		}
		out[i] = ts
	}
	s.streams, s.perStream = out, per
	return nil
}

var errZeroStride = errors.New("afxdp: send: stride 0; give 1, or the number of sockets sending the stream in turn")

var errNoStream = errors.New("afxdp: send: no such stream; call PrepareTx first and pass an index into its streams")

// Send stamps and queues up to n frames of stream (an index into the
// PrepareTx slice) with sequence numbers seq, seq+1, … and transmit time
// txNs, and wakes the kernel when it asks for it. It returns how many frames
// it queued: fewer than n when the stream's chunks or the TX ring are busy
// (completions are reaped on every call). It does not allocate.
func (s *Socket) Send(stream, n int, runID uint8, seq uint64, txNs int64) (int, error) {
	return s.SendStride(stream, n, runID, seq, 1, txNs)
}

// SendStride is Send with sequence numbers seq, seq+stride, seq+2·stride, …:
// one of several sockets sending a stream's frames in turn (socket q of N
// carries the sequence numbers ≡ q mod N, stride N). It does not allocate.
func (s *Socket) SendStride(stream, n int, runID uint8, seq, stride uint64, txNs int64) (int, error) {
	if uint(stream) >= uint(len(s.streams)) {
		return 0, errNoStream
	}
	if stride == 0 {
		return 0, errZeroStride
	}
	s.reap()
	st := &s.streams[stream]
	k := s.tx.free(uint32(min(n, st.nfree)))
	idx := s.tx.cachedProd
	for i := range k {
		addr := st.free[st.head]
		st.head++
		if st.head == st.n {
			st.head = 0
		}
		q := seq + uint64(i)*stride
		t := st.tpls[0]
		if len(st.tpls) > 1 {
			// The frame's template by its place in the stream (the
			// receiver expects frame k's flow and size there); its chunk
			// holds it already unless the chunks came back out of order.
			c := int(addr)/s.cfg.ChunkSize - st.first
			w := uint32(q / stride % uint64(len(st.tpls)))
			t = st.tpls[w]
			if st.cur[c] != w {
				t.CopyTo(s.umem[addr : addr+uint64(s.cfg.ChunkSize)])
				st.cur[c] = w
			}
		}
		t.Stamp(s.umem[addr:addr+uint64(t.Len())], framing.Signature{RunID: runID, StreamID: st.id, Seq: q, TxNs: txNs})
		d := &s.tx.descs[(idx+i)&s.tx.mask]
		d.Addr, d.Len, d.Options = addr, uint32(t.Len()), 0
	}
	st.nfree -= int(k)
	if k > 0 {
		s.tx.submit(k)
		s.txQueued += uint64(k)
	}
	return int(k), s.kick()
}

// kick wakes the kernel to send what the TX ring holds, if it asked for a
// wake-up (copy mode always does). Busy and would-block answers are not
// errors: the frames stay queued and the next call tries again.
//
// In copy mode the kernel stops a wake-up at the first frame the device
// drops (NET_XMIT_DROP: on a veth, the peer's backlog full) and answers
// EBUSY; that frame is completed, the rest still queued. kick then wakes it
// again at once (each EBUSY consumes a frame, so this ends): waiting for
// the next Send left the sender behind its plan whenever the DUT dropped,
// 1.5–7 % short of the intended rate through an overloaded lab DUT.
func (s *Socket) kick() error {
	for range kickRetries {
		if s.txTaken() {
			return nil // the kernel took every queued descriptor
		}
		if !s.tx.needWakeup() {
			return nil
		}
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case unix.EBUSY:
			s.txDeviceDrops++
			continue
		case unix.EAGAIN, unix.ENOBUFS:
			s.txRefused++
			return nil
		case 0, unix.EINTR:
			return nil
		case unix.ENETDOWN, unix.ENXIO:
			return fmt.Errorf("afxdp: send on %s: %w (is the interface up?)", s.cfg.Interface, os.NewSyscallError("sendto", e))
		}
		return fmt.Errorf("afxdp: send on %s: %w", s.cfg.Interface, os.NewSyscallError("sendto", e))
	}
	return nil
}

// kickRetries bounds the wake-ups of one kick that each end at a frame the
// device dropped (EBUSY).
const kickRetries = 1024

// reap takes finished frames off the completion ring and returns their
// chunks to their streams.
func (s *Socket) reap() {
	n := s.comp.avail(s.comp.size)
	if n == 0 {
		return
	}
	idx := s.comp.cachedCons
	for i := range n {
		addr := s.comp.addrs[(idx+i)&s.comp.mask]
		c := int(addr / uint64(s.cfg.ChunkSize))
		if s.perStream == 0 || c/s.perStream >= len(s.streams) {
			continue // not a TX chunk: the kernel never does this
		}
		st := &s.streams[c/s.perStream]
		tail := st.head + st.nfree
		if tail >= st.n {
			tail -= st.n
		}
		st.free[tail] = uint64(c * s.cfg.ChunkSize)
		st.nfree++
	}
	s.comp.release(n)
	s.txCompleted += uint64(n)
}

// InFlight is the number of frames queued and not yet completed.
func (s *Socket) InFlight() int { s.reap(); return int(s.txQueued - s.txCompleted) }

// Flush wakes the kernel and reaps completions until every queued frame is
// completed or timeout passes; it returns an error naming the frames still
// in flight then. It reaps right after each wake-up (copy mode sends in the
// system call) and yields instead of sleeping for the first flushSpin, so
// it returns within microseconds of the last completion.
//
// taken is when the kernel had taken the last queued frame off the TX ring
// (handed it to the device): the end of the sender's part, and what a
// trial counts as the end of its sending. The completions that follow are
// not: in copy mode a frame completes when the kernel frees its copy, and
// on a veth that is when the peer (the DUT) is done with it, its queue
// included (tens of ms behind a full DUT queue). A wake-up the kernel
// refuses leaves frames on the ring and so moves taken later. taken is the
// zero time when frames were still on the ring at the timeout.
func (s *Socket) Flush(timeout time.Duration) (taken time.Time, err error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		s.reap()
		if taken.IsZero() && s.txTaken() {
			taken = time.Now()
		}
		if s.txQueued == s.txCompleted {
			return taken, nil
		}
		if err := s.kick(); err != nil {
			return taken, err
		}
		if taken.IsZero() && s.txTaken() {
			taken = time.Now()
		}
		s.reap()
		if s.txQueued == s.txCompleted {
			return taken, nil
		}
		now := time.Now()
		if now.After(deadline) {
			return taken, fmt.Errorf("afxdp: flush on %s: %d frames still in flight after %v", s.cfg.Interface, s.txQueued-s.txCompleted, timeout)
		}
		if now.Sub(start) < flushSpin {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// txTaken reports whether the kernel has taken every queued descriptor off
// the TX ring (its consumer index caught up with the producer's).
func (s *Socket) txTaken() bool { return atomic.LoadUint32(s.tx.cons) == s.tx.cachedProd }

// flushSpin is how long Flush polls without sleeping.
const flushSpin = 2 * time.Millisecond

// GenResult is what Generate did.
type GenResult struct {
	// Sent is frames completed by the kernel; Seconds the time from the
	// first frame to when the kernel took the last one off the TX ring
	// (Flush's taken: not the last completion, which on a veth waits for
	// the peer to be done with the frame).
	Sent    uint64  `json:"sent"`
	Seconds float64 `json:"seconds"`
	// OfferedFPS is Sent/Seconds; IntendedFPS the rate asked for (0 = full speed).
	OfferedFPS  float64 `json:"offered_fps"`
	IntendedFPS float64 `json:"intended_fps"`
}

// Due is the number of frames a pacer at rate frames/s owes after elapsed
// time: ⌈rate·elapsed⌉, the first frame due at once. A pure function.
func Due(rate float64, elapsed time.Duration) uint64 {
	x := rate * elapsed.Seconds()
	n := uint64(x)
	if float64(n) < x {
		n++
	}
	return max(n, 1)
}

// Generate sends stream at rate frames/s (0: as fast as the socket takes
// them) for d (at a rate, the rate × d frames due, even if a stall makes
// that take longer), in batches of at most batch frames, each stamped with the
// clock read just before it is queued, then flushes. It is the generator-only
// path of the benchmark; a trial paces through Send with its own pacer.
// Cancelling ctx ends it early (checked between batches, not per frame).
func (s *Socket) Generate(ctx context.Context, stream int, runID uint8, rate float64, d time.Duration, batch int) (GenResult, error) {
	if batch <= 0 {
		batch = 64
	}
	res := GenResult{IntendedFPS: rate}
	base := s.txCompleted
	var seq uint64
	// At a rate, the frames due in d are all sent, however late: a stall
	// of the host at the end must not drop the last ones (CI on 2026-12-01
	// sent 9,999 of 10,000).
	planned := uint64(math.Round(rate * d.Seconds()))
	start := time.Now()
	for i := 0; ; i++ {
		now := time.Now()
		el := now.Sub(start)
		if el >= d && (rate <= 0 || seq >= planned) {
			break
		}
		if i&1023 == 0 && ctx.Err() != nil {
			break
		}
		want := batch
		if rate > 0 {
			due := min(Due(rate, el), planned)
			if due <= seq {
				if err := s.kick(); err != nil {
					return res, err
				}
				s.reap()
				// Sleep through long gaps (low rates) instead of spinning;
				// wake early, the sleep overshoots on a busy box.
				if gap := time.Duration(float64(seq)/rate*1e9) - el; gap > 200*time.Microsecond {
					time.Sleep(gap - 100*time.Microsecond)
				}
				continue
			}
			want = int(min(uint64(batch), due-seq))
		}
		n, err := s.Send(stream, want, runID, seq, now.UnixNano())
		seq += uint64(n)
		if err != nil {
			return res, err
		}
	}
	taken, err := s.Flush(2 * time.Second)
	if taken.IsZero() {
		taken = time.Now()
	}
	res.Sent = s.txCompleted - base
	res.Seconds = taken.Sub(start).Seconds()
	if res.Seconds > 0 {
		res.OfferedFPS = float64(res.Sent) / res.Seconds
	}
	return res, err
}
