//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
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

// UDPEngine is the UDP transport: kernel UDP sockets on each side,
// optionally inside network namespaces. Frames of the RFC 2544 sizes become
// datagrams of framing.UDPPayloadSize bytes (F − 46 for IPv4, F − 66 for
// IPv6) carrying the same signature, counters, histograms and pacer as the
// raw engine. It needs no privileges unless a namespace is involved. Run is
// safe to call from several goroutines (calls queue).
type UDPEngine struct {
	cfg    UDPConfig
	mu     sync.Mutex
	runID  uint8
	sides  [2]*udpSide
	closed bool
	tsSeen atomic.Bool // a kernel receive timestamp was seen
}

// udpSide is one side's receive sockets (per family).
type udpSide struct {
	name string
	cfg  UDPPortConfig
	rx   [2]*udpReceiver // IPv4, IPv6; nil when the family is not configured
}

func (s *udpSide) where() string {
	if s.cfg.Namespace != "" {
		return fmt.Sprintf("udp port %s (netns %s)", s.name, s.cfg.Namespace)
	}
	return "udp port " + s.name
}

// OpenUDP opens the receive sockets of both sides (one per configured
// family, bound to Addr:Port and Addr6:Port). Send sockets are opened per
// trial, one per flow.
func OpenUDP(ctx context.Context, cfg UDPConfig) (*UDPEngine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("udp engine config: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &UDPEngine{cfg: cfg}
	for i, pc := range []UDPPortConfig{cfg.A, cfg.B} {
		s := &udpSide{name: []string{"A", "B"}[i], cfg: pc}
		e.sides[i] = s
		for fam, a := range []netip.Addr{pc.Addr, pc.Addr6} {
			if !a.IsValid() {
				continue
			}
			r, err := openUDPReceiver(pc.Namespace, netip.AddrPortFrom(a, pc.Port), cfg.SocketBuffer)
			if err != nil {
				e.Close()
				return nil, fmt.Errorf("%s: %w", s.where(), err)
			}
			s.rx[fam] = r
		}
	}
	if err := ctx.Err(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the receive sockets.
func (e *UDPEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, s := range e.sides {
		if s == nil {
			continue
		}
		for _, r := range s.rx {
			if r != nil {
				errs = append(errs, r.conn.Close())
			}
		}
	}
	return errors.Join(errs...)
}

// Paths reports the kernel paths of the UDP transport. A trial's
// Result.Paths.TX says "sendmmsg+udp_segment" when the kernel took UDP
// segmentation offload for the batches (one buffer per batch, split into
// datagrams below the UDP layer).
func (e *UDPEngine) Paths() Paths {
	p := Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}
	return p
}

// Run runs one trial (see Engine.Run). Before traffic, each send socket
// sends one unsigned datagram so the kernels on the path resolve their
// neighbors (RFC 2544 §23 learning frames), then the engine waits
// Spec.Learning, at least udpMinLearning.
func (e *UDPEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Spec: spec}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return res, errors.New("udp engine is closed")
	}
	proto, fam := framing.IPv4UDP, 0
	if spec.IPv6 {
		proto, fam = framing.IPv6UDP, 1
	}
	for _, s := range e.sides {
		if s.rx[fam] == nil {
			f := []string{"addr", "addr6"}[fam]
			return res, fmt.Errorf("trial ipv6=%v: %s has no %s; configure the tester's %v address on that side", spec.IPv6, s.where(), f, proto)
		}
	}
	if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, e.cfg.PathMTU); err != nil {
		return res, fmt.Errorf("trial frame_size (path MTU %d): %w", e.cfg.PathMTU, err)
	}
	var perPort [2]int
	for _, s := range spec.Streams {
		perPort[sender(s.Direction)]++
	}
	rate := max(spec.RateFPS, rateChangeFPS(spec))
	for i, n := range perPort {
		if e.cfg.MaxRateFPS > 0 && rate*float64(n) > e.cfg.MaxRateFPS {
			return res, fmt.Errorf("trial rate %.0f fps on udp port %s exceeds the safety cap max_rate_fps %.0f: lower the rate or raise the cap",
				rate*float64(n), e.sides[i].name, e.cfg.MaxRateFPS)
		}
	}
	e.runID++
	if e.runID == 0 {
		e.runID = 1
	}
	runID := e.runID
	payloadLen := framing.UDPPayloadSize(spec.FrameSize, proto, false)

	// Streams and their send sockets, one per flow.
	batch := e.cfg.Batch
	states := make([]*streamState, len(spec.Streams))
	var tx [2][]*udpStreamTx
	var rxStreams [2][]*streamState
	defer func() {
		for _, side := range tx {
			for _, st := range side {
				st.close()
			}
		}
	}()
	for i, s := range spec.Streams {
		st := newStreamState(s)
		from, to := sender(s.Direction), 1-sender(s.Direction)
		src := []netip.Addr{e.sides[from].cfg.Addr, e.sides[from].cfg.Addr6}[fam]
		dst := netip.AddrPortFrom([]netip.Addr{e.sides[to].cfg.Addr, e.sides[to].cfg.Addr6}[fam], e.sides[to].cfg.Port)
		stx := &udpStreamTx{st: st}
		tx[from] = append(tx[from], stx)
		for f := 0; f < max(s.Flows, 1); f++ {
			fl, err := openUDPFlow(e.sides[from].cfg.Namespace, src, dst, e.cfg.SocketBuffer, payloadLen, batch)
			if err != nil {
				return res, fmt.Errorf("stream %d flow %d on %s: %w", s.ID, f, e.sides[from].where(), err)
			}
			stx.flows = append(stx.flows, fl)
		}
		if spec.BurstFrames > 0 {
			st.pacer = Pacer{RateFPS: spec.RateFPS, Total: uint64(spec.BurstFrames), MaxBatch: batch}
		} else {
			st.pacer = NewDurationPacer(spec.RateFPS, spec.Duration, spec.RateChange, min(batch, pacedBatch))
		}
		states[i] = st
		rxStreams[to] = append(rxStreams[to], st)
	}

	// Learning: one unsigned datagram per flow, so ARP/ND is done before
	// the clock starts.
	for _, side := range tx {
		for _, st := range side {
			for _, fl := range st.flows {
				_, _ = fl.conn.Write(fl.learn)
			}
		}
	}
	if err := sleepCtx(ctx, max(spec.Learning, udpMinLearning)); err != nil {
		return res, err
	}

	// Receivers.
	var rx [2]*rxTrial
	var drops0 [2]uint64
	var rwg sync.WaitGroup
	for i, s := range e.sides {
		r := s.rx[fam]
		drops0[i] = r.drops()
		rx[i] = newRxTrial(runID, spec.FrameSize, rxStreams[i])
		if err := r.conn.SetReadDeadline(time.Time{}); err != nil {
			return res, fmt.Errorf("%s: %w", s.where(), err)
		}
		r.start(rx[i], payloadLen, e.cfg.RxCPU-1)
		rwg.Go(func() { r.run() })
	}

	// Traffic.
	var stop atomic.Bool
	stopCtx := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopCtx()
	res.Start = time.Now()
	var txs [2]trialTx
	for i := range e.sides {
		if len(tx[i]) == 0 {
			continue
		}
		txs[i] = &udpTransmitter{streams: tx[i], runID: runID, stop: &stop, tagAfter: spec.TagAfter, cpu: e.cfg.TxCPU - 1, where: e.sides[i].where(), hardStop: hardStop(spec)}
	}
	txErr := runTraffic(txs, states, rx, spec.Settle)
	var rerrs []error
	for _, s := range e.sides {
		rerrs = append(rerrs, s.rx[fam].conn.SetReadDeadline(time.Now()))
	}
	rwg.Wait()
	var kdrops [2]uint64
	for i, s := range e.sides {
		r := s.rx[fam]
		rerrs = append(rerrs, r.err)
		if len(rxStreams[i]) > 0 {
			// The socket's drop count (SO_MEMINFO) and the last
			// SO_RXQ_OVFL seen: the larger, never the sum.
			kdrops[i] = max(r.drops()-drops0[i], uint64(r.ovfl-r.ovfl0))
		}
	}
	if r := e.sides[1].rx[fam]; r.tsSeen || e.sides[0].rx[fam].tsSeen {
		e.tsSeen.Store(true)
	}

	// Results.
	res.Paths = e.Paths()
	res.Paths.TxSched = lastTxSched()
	for _, side := range tx {
		for _, st := range side {
			if len(st.flows) > 0 && st.flows[0].gso {
				res.Paths.TX = "sendmmsg+udp_segment"
			}
		}
	}
	if !e.tsSeen.Load() {
		res.Paths.Timestamps = "none"
	}
	var lim limits
	tol := e.cfg.TesterLimitTolerance
	assigned := [2]bool{}
	for _, st := range states {
		intended := intendedFPS(st, spec)
		r := st.result(intended)
		to := 1 - sender(st.spec.Direction)
		if !assigned[to] {
			r.KernelDrops = kdrops[to]
			assigned[to] = true
		}
		res.Streams = append(res.Streams, r)
		lim.add(generatorReasons(st, r, intended, tol, e.cfg.MaxLag, stop.Load()))
		if r.KernelDrops > 0 {
			lim.add(false, []string{fmt.Sprintf("%s: the receiving socket dropped %d datagrams in the kernel (receive queue overflow)",
				e.sides[to].where(), r.KernelDrops)})
		}
	}
	lim.apply(&res)
	if txErr != nil {
		return res, fmt.Errorf("trial: %w", txErr)
	}
	if err := errors.Join(rerrs...); err != nil {
		return res, fmt.Errorf("trial: receive: %w", err)
	}
	return res, ctx.Err()
}

// udpMinLearning is the least wait after the learning datagrams.
const udpMinLearning = 20 * time.Millisecond

// generatorReasons says why a stream's trial is tester-limited on the
// sending side (both engines' rules; see the package doc): frames the kernel
// refused, a generator behind its plan, an offered rate more than tol below
// the intended fps, or a stall over maxLag whose catch-up burst could explain
// the loss. Only the last is transient: the generator kept its rate but the
// tester's host did not schedule it for a while.
func generatorReasons(st *streamState, r StreamResult, intended, tol float64, maxLag time.Duration, stopped bool) (transient bool, reasons []string) {
	switch {
	case st.failed > 0:
		return false, []string{fmt.Sprintf("stream %d: the kernel refused %d frames", st.spec.ID, st.failed)}
	case st.pacer.Total > 0 && st.queued < st.pacer.Total && !stopped:
		return false, []string{fmt.Sprintf("stream %d: generator sent %d of %d planned frames in time (behind the intended %.0f fps)",
			st.spec.ID, st.queued, st.pacer.Total, intended)}
	case st.pacer.RateFPS > 0 && st.pacer.Total > 1 && r.OfferedFPS < intended*(1-tol):
		return false, []string{fmt.Sprintf("stream %d: generator offered %.0f fps, %.2f%% below the intended %.0f fps",
			st.spec.ID, r.OfferedFPS, 100*(1-r.OfferedFPS/intended), intended)}
	}
	if why := StallReason(r, maxLag); why != "" {
		return true, []string{why}
	}
	return false, nil
}

// setBuf sets a socket buffer, forced past the system limit when permitted.
func setBuf(fd int, force, plain, n int) error {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, n) == nil {
		return nil
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, n)
}

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
		r.t.count(r.bufs[i][:ln], ln == r.payloadLen && h.hdr.Flags&unix.MSG_TRUNC == 0, ts)
	}
}

// parseUDPControl reads SCM_TIMESTAMPNS (Unix ns) and SO_RXQ_OVFL (the
// socket's cumulative drop count) from control messages. It does not
// allocate.
func parseUDPControl(b []byte) (tsNs int64, ovfl uint32, okTs, okOvfl bool) {
	const align = int(unsafe.Sizeof(uintptr(0)))
	hdrLen := unix.CmsgLen(0)
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < hdrLen || l > len(b) {
			return
		}
		data := b[hdrLen:l]
		if h.Level == unix.SOL_SOCKET {
			switch h.Type {
			case unix.SCM_TIMESTAMPNS:
				if len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
					ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
					tsNs, okTs = ts.Nano(), true
				}
			case unix.SO_RXQ_OVFL:
				if len(data) >= 4 {
					ovfl, okOvfl = *(*uint32)(unsafe.Pointer(&data[0])), true
				}
			}
		}
		next := (l + align - 1) &^ (align - 1)
		if next >= len(b) {
			return
		}
		b = b[next:]
	}
	return
}

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
	runID    uint8
	stop     *atomic.Bool
	hardStop time.Duration
	tagAfter time.Duration
	cpu      int
	where    string
}

func (t *udpTransmitter) run() error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer txThread(t.cpu)()
	start := time.Now()
	for !t.stop.Load() {
		now := time.Now()
		el := now.Sub(start)
		if t.hardStop > 0 && el > t.hardStop {
			return nil
		}
		ns := now.UnixNano()
		wait := time.Duration(math.MaxInt64)
		sent, active := 0, false
		for _, s := range t.streams {
			n, w, ok := s.st.due(el, ns, t.tagAfter)
			active = active || ok
			if n == 0 {
				wait = min(wait, w)
				continue
			}
			if err := t.send(s, n, ns); err != nil {
				return err
			}
			sent += n
		}
		if !active {
			return nil
		}
		if sent == 0 && wait > 0 && wait != time.Duration(math.MaxInt64) {
			sleep(wait)
		}
	}
	return nil
}

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
		if f.gso {
			framing.EncodeSignature(f.gsoBuf[f.n*f.payload:], sig)
		} else {
			framing.EncodeSignature(f.bufs[f.n], sig)
		}
		f.n++
	}
	st.queued += uint64(n)
	st.lastNs = ns
	for _, f := range s.flows {
		if f.gso && f.n > 0 {
			done, err := f.sendGSO(st)
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
			m, err := f.w.WriteBatch(msgs, 0)
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
func (f *udpFlow) sendGSO(st *streamState) (done bool, err error) {
	n := f.n
	f.gsoMsg[0].Buffers[0] = f.gsoBuf[:n*f.payload]
	for {
		m, err := f.w.WriteBatch(f.gsoMsg, 0)
		if m == 1 {
			st.sent += uint64(n)
			f.n = 0
			return true, nil
		}
		switch {
		case err == nil:
			continue
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
