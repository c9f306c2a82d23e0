//go:build linux

package trials

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// udpReceive is one running receive half: a UDP socket counting some
// streams of one trial (and reflecting their frames, for round-trip
// latency), until Stop.
type udpReceive struct {
	r       *udpReceiver
	names   [][unix.SizeofSockaddrInet6]byte
	from    netip.Addr
	t       *rxTrial
	streams []*streamState
	rtt     []*streamState // reflected copies of streams this port sent
	rttTx   []*streamState // the sending states of rtt (tagged frame)
	spec    Spec
	proto   framing.Proto // of the listen address
	drops0  uint64
	done    chan struct{}

	reflect    netip.AddrPort
	reflectFPS float64
	tagLo      uint64 // sequence numbers tagLo..tagHi are reflected even
	tagHi      uint64 // when the bucket is empty (see reflectOne)
	tokens     float64
	lastNs     int64
	reflected  uint64
	reflectErr uint64
	foreignSrc uint64
}

// startUDPReceive opens a receive socket on opt.Listen and counts the
// streams recv of spec, whose frames carry run id runID, until Stop.
func startUDPReceive(cfg RemotePort, spec Spec, runID uint8, recv []Stream, opt RemoteReceive) (*udpReceive, error) {
	u, err := openUDPReceive(cfg, spec, recv, opt)
	if err != nil {
		return nil, err
	}
	for _, s := range recv {
		st := newStreamState(s)
		st.trend.relative = opt.UnsyncedClock
		u.streams = append(u.streams, st)
	}
	t := newRxTrial(runID, spec.FrameSize, u.streams)
	if spec.OnInterval != nil {
		t.live = newLiveMeter() // process publishes it once per batch
	}
	u.start(t)
	return u, nil
}

// openUDPReceive checks what a receive half allocates from and opens its
// socket on opt.Listen (with the source filter of opt.From); it counts
// nothing until start.
func openUDPReceive(cfg RemotePort, spec Spec, recv []Stream, opt RemoteReceive) (*udpReceive, error) {
	cfg = cfg.withDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if opt.Reflect.IsValid() && opt.Reflect.Addr().Is4() != opt.Listen.Addr().Is4() {
		return nil, fmt.Errorf("udp receive: reflect address %v and listen address %v: not the same IP family", opt.Reflect, opt.Listen)
	}
	// Bound everything the wire controls before allocating: the frame
	// size sizes the receive buffers, the flows each stream's state.
	if err := checkHalf(cfg.Namespace, spec, recv, opt.Listen.Addr(), "udp receive"); err != nil {
		return nil, err
	}
	r, err := openUDPReceiver(cfg.Namespace, opt.Listen, cfg.SocketBuffer)
	if err != nil {
		return nil, err
	}
	if opt.From.IsValid() {
		if err := attachSourceFilter(r.raw, opt.From); err != nil {
			r.conn.Close()
			return nil, fmt.Errorf("udp receive: source filter for %v: %w", opt.From, err)
		}
	}
	u := &udpReceive{r: r, from: opt.From, spec: spec, reflect: opt.Reflect, reflectFPS: opt.ReflectFPS, done: make(chan struct{}), proto: framing.IPv4UDP}
	if opt.Listen.Addr().Is6() {
		u.proto = framing.IPv6UDP
	}
	u.names = make([][unix.SizeofSockaddrInet6]byte, len(r.hdrs))
	for i := range r.hdrs {
		r.hdrs[i].hdr.Name = &u.names[i][0]
		r.hdrs[i].hdr.Namelen = unix.SizeofSockaddrInet6
	}
	return u, nil
}

// echo adds to t, before start, the reflected copies of the streams rtt
// this port sent (round-trip latency); txOf gives the sending state of a
// stream (its tagged frame), or nil.
func (u *udpReceive) echo(t *rxTrial, rtt []Stream, txOf func(id uint16) *streamState) {
	for _, s := range rtt {
		st := newStreamState(s)
		st.echo = true
		u.rtt = append(u.rtt, st)
		u.rttTx = append(u.rttTx, txOf(s.ID))
		t.streams = append(t.streams, st)
	}
}

// start starts counting into t (and reflecting) until Stop or halt.
func (u *udpReceive) start(t *rxTrial) {
	u.t = t
	u.drops0 = u.r.drops()
	u.r.start(u.t, framing.UDPPayloadSize(u.spec.FrameSize, u.proto, false), -1)
	u.tokens = 1
	if spec := u.spec; spec.TagAfter > 0 && spec.RateFPS > 0 {
		n := NewDurationPacer(spec.RateFPS, spec.Duration, spec.RateChange, pacedBatch).due(spec.TagAfter)
		u.tagLo, u.tagHi = n-min(n, reflectTagWindow), n+reflectTagWindow
	}
	go u.run()
}

// Port is the UDP port the socket is bound to.
func (u *udpReceive) Port() uint16 {
	return u.r.conn.LocalAddr().(*net.UDPAddr).AddrPort().Port()
}

func (u *udpReceive) run() {
	defer close(u.done)
	defer reserveProcs(1)()
	r := u.r
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r.readLoop(func(n int) {
		u.process(n)
		for i := 0; i < n; i++ {
			r.hdrs[i].hdr.Namelen = unix.SizeofSockaddrInet6
		}
	})
}

// source is the source address of datagram i of the batch.
func (u *udpReceive) source(i int) netip.Addr {
	b := &u.names[i]
	switch (*unix.RawSockaddr)(unsafe.Pointer(&b[0])).Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(&b[0]))
		return netip.AddrFrom4(sa.Addr)
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(&b[0]))
		return netip.AddrFrom16(sa.Addr).Unmap()
	}
	return netip.Addr{}
}

// process counts (and reflects) the first n datagrams of the batch. It does
// not allocate.
func (u *udpReceive) process(n int) {
	r := u.r
	for i := 0; i < n; i++ {
		if u.from.IsValid() && u.source(i) != u.from {
			u.foreignSrc++
			continue
		}
		b, sizeOK, ts := r.datagram(i)
		if len(u.rtt) > 0 {
			if sig, err := framing.DecodeSignature(b); err == nil && sig.RunID == u.t.runID {
				for k, s := range u.rtt {
					if s.spec.ID == sig.StreamID && u.rttTx[k] != nil {
						s.tagSeq.Store(u.rttTx[k].tagSeq.Load())
					}
				}
			}
		}
		u.t.count(b, sizeOK, ts)
		if u.reflect.IsValid() && sizeOK {
			u.reflectOne(b, ts)
		}
	}
	u.t.live.publish()
}

// reflectTagWindow is how far around the frame due at Spec.TagAfter the
// reflector looks for the sender's tagged frame: the sender tags the first
// frame of the batch it sends at or after TagAfter, a few batches at most
// from the one due then.
const reflectTagWindow = 32

// reflectOne sends a counted test frame back, within the token bucket. The
// frames around the tagged one are reflected even from an empty bucket, so
// the tagged frame's round trip is timed at any rate: the bucket then goes
// into debt (at most 2·reflectTagWindow+1 frames, once per trial), which
// later frames repay, so the average stays within ReflectFPS.
func (u *udpReceive) reflectOne(b []byte, ts int64) {
	sig, err := framing.DecodeSignature(b)
	if err != nil || sig.RunID != u.t.runID || u.t.lookup(sig.StreamID) == nil {
		return
	}
	if u.lastNs != 0 {
		u.tokens = min(u.tokens+float64(ts-u.lastNs)/1e9*u.reflectFPS, max(1, u.reflectFPS/20))
	}
	u.lastNs = ts
	tagged := u.tagHi > 0 && sig.Seq >= u.tagLo && sig.Seq <= u.tagHi && u.tokens > -2*reflectTagWindow-1
	if u.tokens < 1 && !tagged {
		return
	}
	u.tokens--
	if _, err := u.r.conn.WriteToUDPAddrPort(b, u.reflect); err != nil {
		u.reflectErr++
		return
	}
	u.reflected++
}

// halt stops the receive loop; frames the socket holds when it is called
// are counted first. It returns the loop's error.
func (u *udpReceive) halt() error {
	err := u.r.conn.SetReadDeadline(time.Now())
	<-u.done
	return errors.Join(err, u.r.err)
}

// kernelDrops is what the socket dropped in the kernel since start: the
// larger of its drop count (SO_MEMINFO) and the last SO_RXQ_OVFL seen.
func (u *udpReceive) kernelDrops() uint64 {
	return max(u.r.drops()-u.drops0, uint64(u.r.ovfl-u.r.ovfl0))
}

// Stop stops receiving and returns the counters. sent holds what the
// sender sent per stream ID (nil: unknown; Lost is then zero). Frames the
// socket holds when Stop is called are counted first.
func (u *udpReceive) Stop(sent map[uint16]uint64) (udpReceiveResult, error) {
	err := u.halt()
	res := udpReceiveResult{Reflected: u.reflected, Paths: Paths{Transport: "udp", RX: "recvmmsg", Timestamps: "kernel-sw"}}
	if !u.r.tsSeen {
		res.Paths.Timestamps = "none"
	}
	res.KernelDrops = u.kernelDrops()
	for i, st := range u.streams {
		n, ok := sent[st.spec.ID]
		if !ok {
			n = st.received
		}
		st.sent, st.queued = n, n
		st.pacer = trialPacer(u.spec, pacedBatch, false) // the sender's schedule, for the loss timing
		sr := st.result(u.spec.RateFPS)
		if i == 0 {
			sr.KernelDrops = res.KernelDrops
		}
		res.Streams = append(res.Streams, sr)
	}
	return res, errors.Join(err, u.r.conn.Close())
}

// attachSourceFilter makes the kernel drop, before they are queued on the
// socket, datagrams whose source address is not from: a stranger's flood
// then never fills the receive buffer (which would show as kernel drops in
// the trial's results) nor reaches this process. process checks the source
// again (datagrams queued before the filter was attached).
func attachSourceFilter(raw syscall.RawConn, from netip.Addr) error {
	// A socket filter sees the packet from its transport header; the IP
	// header is at the ancillary offset SKF_NET_OFF.
	const netOff = -0x100000 // SKF_NET_OFF
	var prog []bpf.Instruction
	if from.Is4() {
		a := from.As4()
		prog = []bpf.Instruction{
			bpf.LoadAbsolute{Off: uint32(netOff + 12 + (1 << 32)), Size: 4}, // IPv4 source
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: binary.BigEndian.Uint32(a[:]), SkipTrue: 1},
			bpf.RetConstant{Val: 0xffffffff},
			bpf.RetConstant{Val: 0},
		}
	} else {
		a := from.As16()
		for i := 0; i < 4; i++ {
			prog = append(prog,
				bpf.LoadAbsolute{Off: uint32(netOff + 8 + 4*i + (1 << 32)), Size: 4}, // IPv6 source, word i
				bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: binary.BigEndian.Uint32(a[4*i:]), SkipTrue: uint8(2*(3-i) + 1)})
		}
		prog = append(prog, bpf.RetConstant{Val: 0xffffffff}, bpf.RetConstant{Val: 0})
	}
	ins, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(ins))
	for i, in := range ins {
		f[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fprog)
	}); err != nil {
		return err
	}
	return serr
}

// maxHalfFlows bounds a stream's flows in a two-host half: one UDP source
// port each. The agent's protocol bounds them far lower (agent.MaxFlows).
const maxHalfFlows = 1 << 16

// checkHalf checks what a half allocates from: the frame size against the
// IP version's limits and the MTU of the interface holding local (when it
// is one of this host's or namespace's addresses), and each stream's flows.
func checkHalf(ns string, spec Spec, streams []Stream, local netip.Addr, where string) error {
	proto := framing.IPv4UDP
	if local.IsValid() && local.Unmap().Is6() || !local.IsValid() && spec.IPv6 {
		proto = framing.IPv6UDP
	}
	if framing.IsMix(spec.FrameSize) {
		return fmt.Errorf("%s: trial frame_size %s: the agent's halves send one frame size; run mixes on the lab or with --transport raw or udp", where, framing.SizeName(spec.FrameSize))
	}
	mtu := localMTU(ns, local)
	if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, mtu); err != nil {
		if mtu > 0 {
			return fmt.Errorf("%s: trial frame_size (MTU %d at %v): %w", where, mtu, local, err)
		}
		return fmt.Errorf("%s: trial frame_size: %w", where, err)
	}
	for _, s := range streams {
		if s.Flows < 0 || s.Flows > maxHalfFlows {
			return fmt.Errorf("%s: stream %d flows %d: want 0 to %d", where, s.ID, s.Flows, maxHalfFlows)
		}
	}
	return nil
}

// localMTU is the MTU of the interface that holds a in namespace ns, or 0
// when a is unspecified or not found.
func localMTU(ns string, a netip.Addr) int {
	if !a.IsValid() || a.IsUnspecified() {
		return 0
	}
	a = a.Unmap()
	mtu := 0
	_ = nsutil.Do(ns, func() error {
		ifs, err := net.Interfaces()
		if err != nil {
			return err
		}
		for _, ifc := range ifs {
			addrs, err := ifc.Addrs()
			if err != nil {
				continue
			}
			for _, x := range addrs {
				if p, ok := x.(*net.IPNet); ok {
					if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap() == a {
						mtu = ifc.MTU
						return nil
					}
				}
			}
		}
		return nil
	})
	return mtu
}
