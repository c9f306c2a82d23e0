//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/sys/unix"
)

// udpReceiver is one receive socket and its recvmmsg batch. It reads with
// its own recvmmsg on the connection's file descriptor (through the Go
// poller), because golang.org/x/net's ReadBatch allocates each datagram's
// source address and the per-frame path must not allocate.
type udpReceiver struct {
	conn *net.UDPConn
	raw  syscall.RawConn
	hdrs []mmsghdr
	iovs []unix.Iovec
	bufs [][]byte
	oobs [][]byte

	t          *rxTrial
	payloadLen int
	cpu        int
	n          int
	errno      syscall.Errno
	readFn     func(fd uintptr) bool
	ovfl0      uint32 // SO_RXQ_OVFL when the trial started
	ovfl       uint32 // the latest SO_RXQ_OVFL seen
	haveOvfl   bool
	tsSeen     bool
	err        error
}

// mmsghdr is struct mmsghdr (sys/socket.h).
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

const udpOOBLen = 128

func openUDPReceiver(ns string, ap netip.AddrPort, buf int) (*udpReceiver, error) {
	network := "udp4"
	if ap.Addr().Is6() {
		network = "udp6"
	}
	stampKeeper() // in this process's own namespace, before entering ns
	var conn *net.UDPConn
	err := nsutil.Do(ns, func() error {
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				if serr = setBuf(int(fd), unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, buf); serr != nil {
					serr = fmt.Errorf("receive buffer: %w", serr)
					return
				}
				if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); serr != nil {
					serr = fmt.Errorf("SO_TIMESTAMPNS: %w", serr)
					return
				}
				if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1); serr != nil {
					serr = fmt.Errorf("SO_RXQ_OVFL: %w", serr)
				}
			})
			return errors.Join(err, serr)
		}}
		pc, err := lc.ListenPacket(context.Background(), network, ap.String())
		if err != nil {
			return err
		}
		conn = pc.(*net.UDPConn)
		return nil
	})
	if errors.Is(err, unix.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %v: %w (another program, or another rfc2544 run or agent, holds UDP port %d there)", ap, err, ap.Port())
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %v: %w (is the address configured on this host or namespace?)", ap, err)
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	r := &udpReceiver{conn: conn, raw: raw, hdrs: make([]mmsghdr, udpMaxBatch), iovs: make([]unix.Iovec, udpMaxBatch),
		bufs: make([][]byte, udpMaxBatch), oobs: make([][]byte, udpMaxBatch)}
	for i := range r.hdrs {
		r.oobs[i] = make([]byte, udpOOBLen)
		h := &r.hdrs[i].hdr
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
		h.Control = &r.oobs[i][0]
	}
	r.readFn = r.recv
	return r, nil
}

// drops is the socket's kernel drop count (SO_MEMINFO, SK_MEMINFO_DROPS).
func (r *udpReceiver) drops() uint64 {
	var d uint64
	_ = r.raw.Control(func(fd uintptr) {
		var mi [unix.SK_MEMINFO_VARS]uint32
		l := uint32(unsafe.Sizeof(mi))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO, uintptr(unsafe.Pointer(&mi[0])), uintptr(unsafe.Pointer(&l)), 0)
		if e == 0 {
			d = uint64(mi[unix.SK_MEMINFO_DROPS])
		}
	})
	return d
}

// start prepares a trial: datagrams are read into buffers of payloadLen+1
// bytes, so a longer one shows as the wrong size (MSG_TRUNC). Each iovec is
// set from its own buffer, base and length, so the kernel never writes past
// a buffer whatever payloadLen is (clamped to 0..framing.MaxJumbo).
func (r *udpReceiver) start(t *rxTrial, payloadLen, cpu int) {
	payloadLen = min(max(payloadLen, 0), framing.MaxJumbo)
	r.t, r.payloadLen, r.cpu, r.err = t, payloadLen, cpu, nil
	r.ovfl0 = r.ovfl
	for i := range r.iovs {
		if cap(r.bufs[i]) < payloadLen+1 {
			r.bufs[i] = make([]byte, payloadLen+1)
		}
		r.bufs[i] = r.bufs[i][:payloadLen+1]
		r.iovs[i].Base = &r.bufs[i][0]
		r.iovs[i].SetLen(len(r.bufs[i]))
	}
}

// recv is one non-blocking recvmmsg; it reports false (wait) on EAGAIN.
func (r *udpReceiver) recv(fd uintptr) bool {
	for i := range r.hdrs {
		r.hdrs[i].hdr.SetControllen(udpOOBLen)
		r.hdrs[i].hdr.Flags = 0
	}
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(len(r.hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false
	}
	r.n, r.errno = int(n), e
	return true
}

// run reads and counts datagrams until the read deadline passes.
func (r *udpReceiver) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pinThread(r.cpu)
	r.readLoop(r.process)
}

// readLoop reads batches with recvmmsg and hands each batch's count to
// process (one call per batch) until the read deadline passes or a read
// fails; r.err records a failure. A refused-port error (ECONNREFUSED, an ICMP
// answer to our own sends) is skipped. The caller locks the OS thread.
func (r *udpReceiver) readLoop(process func(n int)) {
	for {
		r.n, r.errno = 0, 0
		if err := r.raw.Read(r.readFn); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				r.err = err
			}
			return
		}
		if r.errno != 0 {
			if r.errno == unix.ECONNREFUSED {
				continue
			}
			r.err = fmt.Errorf("recvmmsg: %w", r.errno)
			return
		}
		process(r.n)
	}
}

// process counts the first n datagrams of the batch. It does not allocate.
func (r *udpReceiver) process(n int) {
	for i := 0; i < n; i++ {
		b, sizeOK, ts := r.datagram(i)
		r.t.countLen(b, sizeOK, r.mixLen(i, len(b)), ts)
	}
	r.t.live.publish()
}

// mixLen is the length of datagram i (ln bytes read) for a mix trial's
// check (rxTrial.countLen): ln, or −2 (no size matches) when the kernel
// truncated it. It does not allocate.
func (r *udpReceiver) mixLen(i, ln int) int {
	if r.hdrs[i].hdr.Flags&unix.MSG_TRUNC != 0 || ln > r.payloadLen {
		return -2
	}
	return ln
}

// datagram returns datagram i of the batch: its payload, whether it has the
// trial's payload size (not truncated), and its receive time (the kernel's
// SCM_TIMESTAMPNS, else now, in Unix ns). It records the socket's
// SO_RXQ_OVFL drop count and whether a kernel stamp was seen. It does not
// allocate.
func (r *udpReceiver) datagram(i int) (b []byte, sizeOK bool, tsNs int64) {
	h := &r.hdrs[i]
	ts, ovfl, okTs, okOvfl := parseUDPControl(r.oobs[i][:h.hdr.Controllen])
	if okOvfl {
		r.ovfl = ovfl
	}
	if !okTs {
		ts = time.Now().UnixNano()
	} else {
		r.tsSeen = true
	}
	ln := min(int(h.n), len(r.bufs[i]))
	return r.bufs[i][:ln], ln == r.payloadLen && h.hdr.Flags&unix.MSG_TRUNC == 0, ts
}
