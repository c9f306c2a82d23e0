//go:build linux

package trials

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// batchWriter is ipv4.PacketConn or ipv6.PacketConn (sendmmsg).
type batchWriter interface {
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// udpFlow is one send socket (one source port) of a stream, with its batch
// of payload buffers.
type udpFlow struct {
	conn  *net.UDPConn
	w     batchWriter
	msgs  []ipv4.Message
	bufs  [][]byte
	n     int // datagrams queued in msgs
	learn []byte
	// UDP segmentation offload (UDP_SEGMENT, Linux 4.18): a batch is one
	// buffer of payloads that the kernel splits into datagrams of
	// payloadLen bytes below the UDP layer (in software at the tester's
	// port when the port has no GSO: the wire and the DUT see ordinary
	// datagrams). gso is false when the kernel refused it.
	gso     bool
	gsoBuf  []byte
	gsoMsg  []ipv4.Message
	payload int
}

func openUDPFlow(ns string, src netip.Addr, dst netip.AddrPort, buf, payloadLen, batch int) (*udpFlow, error) {
	network := "udp4"
	if src.Is6() {
		network = "udp6"
	}
	var conn *net.UDPConn
	err := nsutil.Do(ns, func() error {
		d := net.Dialer{LocalAddr: net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				if serr = setBuf(int(fd), unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, buf); serr != nil {
					serr = fmt.Errorf("send buffer: %w", serr)
					return
				}
				// Never fragment: a frame size above the path MTU is an
				// error, not two packets.
				if src.Is6() {
					serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO)
				} else {
					serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
				}
			})
			return errors.Join(err, serr)
		}}
		c, err := d.Dial(network, dst.String())
		if err != nil {
			return err
		}
		conn = c.(*net.UDPConn)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open a send socket from %v to %v: %w", src, dst, err)
	}
	f := &udpFlow{conn: conn, msgs: make([]ipv4.Message, batch), bufs: make([][]byte, batch), learn: make([]byte, payloadLen),
		payload: payloadLen}
	if batch > 1 && batch*payloadLen <= udpMaxGSOBytes {
		f.gso = true
		f.gsoBuf = make([]byte, batch*payloadLen)
		framing.FillPayload(f.gsoBuf)
		oob := make([]byte, unix.CmsgSpace(2))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
		h.SetLen(unix.CmsgLen(2))
		*(*uint16)(unsafe.Pointer(&oob[unix.CmsgLen(0)])) = uint16(payloadLen)
		f.gsoMsg = []ipv4.Message{{Buffers: [][]byte{f.gsoBuf}, OOB: oob}}
	}
	if src.Is6() {
		f.w = ipv6.NewPacketConn(conn)
	} else {
		f.w = ipv4.NewPacketConn(conn)
	}
	framing.FillPayload(f.learn)
	for i := range f.bufs {
		f.bufs[i] = make([]byte, payloadLen)
		framing.FillPayload(f.bufs[i])
		f.msgs[i].Buffers = [][]byte{f.bufs[i]}
	}
	return f, nil
}

// udpStreamTx is a stream's transmit side.
type udpStreamTx struct {
	st    *streamState
	flows []*udpFlow
	// lens are, for a frame-size mix, the payload sizes of the pattern's
	// places (datagram n is lens[n mod len] bytes); nil for one size.
	lens []int
}

func (s *udpStreamTx) close() {
	for _, f := range s.flows {
		f.conn.Close()
	}
}

// udpTransmitter sends the streams of one side on one goroutine locked to
// its OS thread, paced like the raw transmitter: the clock is read once per
// batch and every datagram of the batch carries that reading.
type udpTransmitter struct {
	streams  []*udpStreamTx
	press    txPressure // back-pressure measurements (backpressure_linux.go)
	runID    uint8
	stop     *atomic.Bool
	hardStop time.Duration
	tagAfter time.Duration
	cpu      int
	where    string
	start    time.Time // the transmit loop's start (hardStop counts from it)
}

func (t *udpTransmitter) run() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer txThread(t.cpu)()
	states := make([]*streamState, len(t.streams))
	for i, s := range t.streams {
		states[i] = s.st
	}
	t.press.begin()
	defer t.press.end()
	t.start = time.Now()
	return paceLoop(t, states, t.hardStop, t.tagAfter, t.stop)
}

// udpWaitSlice bounds one blocking wait for send-buffer room, so a stopped
// trial or its hard stop ends a sender the path holds back.
const udpWaitSlice = 20 * time.Millisecond

// write hands msgs to the kernel (sendmmsg) without blocking. When the
// socket's send buffer is full — the kernel still holds datagrams sent
// before: queued in the tester port's device queue or, behind a veth, in an
// overrun DUT's backlog, which the path's flow control is — it waits for
// room and times the wait as back-pressure (TxPressure.RingFull*, with
// SendBuffer set). It returns what the last sendmmsg returned.
func (t *udpTransmitter) write(f *udpFlow, msgs []ipv4.Message) (int, error) {
	m, err := f.w.WriteBatch(msgs, unix.MSG_DONTWAIT)
	if m > 0 || !errors.Is(err, unix.EAGAIN) {
		t.press.kicked(err != nil && m <= 0)
		return m, err
	}
	since := time.Now()
	defer t.press.ringFull(since)
	for {
		if err := f.conn.SetWriteDeadline(time.Now().Add(udpWaitSlice)); err != nil {
			return 0, err
		}
		m, err = f.w.WriteBatch(msgs, 0)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if t.stop.Load() || (t.hardStop > 0 && time.Since(t.start) > t.hardStop) {
			break
		}
	}
	t.press.kicked(err != nil && m <= 0)
	if derr := f.conn.SetWriteDeadline(time.Time{}); derr != nil && err == nil {
		err = derr
	}
	return m, err
}

var _ batchSender = (*udpTransmitter)(nil)

// queue sends the n due datagrams of stream i at once (send).
func (t *udpTransmitter) queue(i int, _ *streamState, n int, ns int64) (int64, error) {
	return ns, t.send(t.streams[i], n, ns)
}

func (t *udpTransmitter) push() error  { return nil }
func (t *udpTransmitter) idle()        {}
func (t *udpTransmitter) flush() error { return nil }

// send stamps n datagrams of stream s with ns, spreads them over the flows
// (frame n goes to flow n mod flows) and hands each flow's share to the
// kernel with sendmmsg. It does not allocate per datagram.
func (t *udpTransmitter) send(s *udpStreamTx, n int, ns int64) error {
	st := s.st
	nf := uint64(len(s.flows))
	for k := 0; k < n; k++ {
		seq := st.queued + uint64(k)
		f := s.flows[seq%nf]
		sig := framing.Signature{RunID: t.runID, StreamID: st.spec.ID, Seq: seq, TxNs: ns}
		switch {
		case f.gso:
			framing.EncodeSignature(f.gsoBuf[f.n*f.payload:], sig)
		case s.lens != nil:
			b := f.bufs[f.n][:s.lens[seq%uint64(len(s.lens))]]
			f.msgs[f.n].Buffers[0] = b
			framing.EncodeSignature(b, sig)
		default:
			framing.EncodeSignature(f.bufs[f.n], sig)
		}
		f.n++
	}
	st.queued += uint64(n)
	st.lastNs = ns
	for _, f := range s.flows {
		if f.gso && f.n > 0 {
			done, err := t.sendGSO(f, st)
			if err != nil {
				return fmt.Errorf("%s: sendmsg with UDP_SEGMENT: %w", t.where, err)
			}
			if done {
				continue
			}
			// The kernel refused segmentation offload: resend the batch
			// one datagram per message from now on.
			f.gso = false
			for i := 0; i < f.n; i++ {
				copy(f.bufs[i][:framing.SignatureLen], f.gsoBuf[i*f.payload:])
			}
		}
		msgs := f.msgs[:f.n]
		f.n = 0
		for len(msgs) > 0 {
			m, err := t.write(f, msgs)
			st.sent += uint64(max(m, 0))
			if m > 0 {
				msgs = msgs[m:]
			}
			if err == nil {
				continue
			}
			if errors.Is(err, unix.ECONNREFUSED) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EHOSTUNREACH) {
				// The kernel refused the first datagram left (an
				// ICMP error from an earlier one, or no buffer):
				// count it failed and go on.
				st.failed++
				msgs = msgs[1:]
				continue
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Stopped (or past the hard stop) while the path held
				// the sender back: the rest were never offered.
				return nil
			}
			st.failed += uint64(len(msgs))
			return fmt.Errorf("%s: sendmmsg: %w", t.where, err)
		}
	}
	return nil
}

// udpMaxGSOBytes bounds one UDP_SEGMENT send (the kernel's limit is a 64 KiB
// datagram of at most 64 segments on older kernels).
const udpMaxGSOBytes = 60000

// sendGSO sends f's batch as one UDP_SEGMENT message. done is false (and
// nothing was sent) when the kernel refuses segmentation offload; errors
// other than the transient ones are returned.
func (t *udpTransmitter) sendGSO(f *udpFlow, st *streamState) (done bool, err error) {
	n := f.n
	f.gsoMsg[0].Buffers[0] = f.gsoBuf[:n*f.payload]
	for {
		m, err := t.write(f, f.gsoMsg)
		if m == 1 {
			st.sent += uint64(n)
			f.n = 0
			return true, nil
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
			f.n = 0 // stopped while held back: never offered
			return true, nil
		case errors.Is(err, unix.EIO), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOPROTOOPT), errors.Is(err, unix.EOPNOTSUPP):
			return false, nil
		case errors.Is(err, unix.ECONNREFUSED), errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EHOSTUNREACH):
			st.failed += uint64(n)
			f.n = 0
			return true, nil
		default:
			st.failed += uint64(n)
			f.n = 0
			return true, err
		}
	}
}
