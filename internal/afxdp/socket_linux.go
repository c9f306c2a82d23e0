//go:build linux

package afxdp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Socket is one AF_XDP socket with its own UMEM, bound to one queue of one
// interface. Its methods are not safe for concurrent use, except that one
// goroutine may send while another receives (they share nothing but the fd).
type Socket struct {
	cfg      Config
	fd       int
	ifindex  int
	features Features

	umem       []byte
	fill       *addrRing
	comp       *addrRing
	rx         *descRing
	tx         *descRing
	xsks       *ebpf.Map
	prog       *ebpf.Program
	stamp      Stamp // where the program writes the receive time
	link       link.Link
	monoToReal int64 // CLOCK_REALTIME − CLOCK_MONOTONIC at Open, ns
	// shared is true for a socket of OpenQueues other than the first: it
	// uses the first socket's XDP program and socket map (xsks) and must
	// not close them.
	shared bool

	txChunks, rxChunks int // chunks [0, txChunks) send, the rest receive
	txState
	rxState
}

// Open creates, maps and binds the socket (see Config), loads and attaches
// the XDP program for RX, and probes which mode runs (Features). Errors that
// mean AF_XDP cannot run here wrap ErrNotSupported and name what is missing;
// permission errors also keep errors.Is(err, os.ErrPermission).
// bindBusyWait bounds how long Open retries a bind the kernel answers with
// EBUSY (a queue a closed socket still holds).
const bindBusyWait = time.Second

func Open(cfg Config) (_ *Socket, err error) {
	return openShared(cfg, nil, cfg.Queue+1)
}

// openShared is Open; owner, when not nil, is the socket whose XDP program and
// socket map (with room for mapEntries queues) this one shares.
func openShared(cfg Config, owner *Socket, mapEntries int) (_ *Socket, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ifi, err := net.InterfaceByName(cfg.Interface)
	if err != nil {
		return nil, fmt.Errorf("afxdp: look up interface %q: %w", cfg.Interface, err)
	}
	s := &Socket{cfg: cfg, fd: -1, ifindex: ifi.Index}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.txChunks, s.rxChunks = cfg.Frames, 0
	if cfg.RX && cfg.TX {
		s.txChunks, s.rxChunks = cfg.Frames/2, cfg.Frames/2
	} else if cfg.RX {
		s.txChunks, s.rxChunks = 0, cfg.Frames
	}
	if s.rxChunks > cfg.RingSize {
		// The fill ring must hold every free receive chunk.
		s.rxChunks = cfg.RingSize
	}

	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, classify("create AF_XDP socket", err)
	}
	s.fd = fd

	// UMEM: anonymous memory registered with the socket (pinned; counted
	// against RLIMIT_MEMLOCK without CAP_IPC_LOCK).
	s.umem, err = unix.Mmap(-1, 0, cfg.Frames*cfg.ChunkSize, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("afxdp: map %d-byte umem: %w", cfg.Frames*cfg.ChunkSize, os.NewSyscallError("mmap", err))
	}
	reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&s.umem[0]))), Len: uint64(len(s.umem)), Size: uint32(cfg.ChunkSize)}
	if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
		if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EPERM) {
			return nil, notSupported("register %d-byte umem: %v: the locked-memory limit (ulimit -l, RLIMIT_MEMLOCK) is too low for a process without CAP_IPC_LOCK; raise it or run as root", len(s.umem), err)
		}
		return nil, classify("register umem", err)
	}
	for _, o := range []struct {
		opt int
		on  bool
	}{{unix.XDP_UMEM_FILL_RING, true}, {unix.XDP_UMEM_COMPLETION_RING, true}, {unix.XDP_RX_RING, cfg.RX}, {unix.XDP_TX_RING, cfg.TX}} {
		if !o.on {
			continue
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_XDP, o.opt, cfg.RingSize); err != nil {
			return nil, classify("size ring", err)
		}
	}
	var off unix.XDPMmapOffsets
	if err := getsockopt(fd, unix.XDP_MMAP_OFFSETS, unsafe.Pointer(&off), unsafe.Sizeof(off)); err != nil {
		return nil, classify("get ring offsets", err)
	}
	if s.fill, err = mapAddrRing(fd, off.Fr, unix.XDP_UMEM_PGOFF_FILL_RING, cfg.RingSize); err != nil {
		return nil, fmt.Errorf("afxdp: map fill ring: %w", os.NewSyscallError("mmap", err))
	}
	if s.comp, err = mapAddrRing(fd, off.Cr, unix.XDP_UMEM_PGOFF_COMPLETION_RING, cfg.RingSize); err != nil {
		return nil, fmt.Errorf("afxdp: map completion ring: %w", os.NewSyscallError("mmap", err))
	}
	if cfg.RX {
		if s.rx, err = mapDescRing(fd, off.Rx, unix.XDP_PGOFF_RX_RING, cfg.RingSize); err != nil {
			return nil, fmt.Errorf("afxdp: map rx ring: %w", os.NewSyscallError("mmap", err))
		}
	}
	if cfg.TX {
		if s.tx, err = mapDescRing(fd, off.Tx, unix.XDP_PGOFF_TX_RING, cfg.RingSize); err != nil {
			return nil, fmt.Errorf("afxdp: map tx ring: %w", os.NewSyscallError("mmap", err))
		}
	}

	// The XDP program first: its mode decides whether zero-copy may be tried.
	if cfg.RX && owner == nil {
		if err := s.attach(mapEntries); err != nil {
			return nil, err
		}
	} else if cfg.RX {
		s.xsks, s.prog, s.stamp, s.shared = owner.xsks, owner.prog, owner.stamp, true
		s.features.XDPMode, s.features.RxTimestamp, s.features.StampFallback = owner.features.XDPMode, owner.features.RxTimestamp, owner.features.StampFallback
	}
	flags := uint16(unix.XDP_USE_NEED_WAKEUP)
	switch {
	case cfg.CopyMode == CopyForce || s.features.XDPMode == "generic":
		flags |= unix.XDP_COPY
	case cfg.CopyMode == ZeroCopyForce:
		flags |= unix.XDP_ZEROCOPY
	}
	sa := &unix.SockaddrXDP{Flags: flags, Ifindex: uint32(s.ifindex), QueueID: uint32(cfg.Queue)}
	// A socket closed on this queue a moment ago may still hold it: the
	// kernel frees its buffer pool in deferred work, and until then bind
	// says EBUSY (seen right after the generator-only run of
	// TestXDPTesterLimited). Wait for that, briefly.
	err = unix.Bind(fd, sa)
	for wait := time.Duration(0); errors.Is(err, unix.EBUSY) && wait < bindBusyWait; wait += 10 * time.Millisecond {
		time.Sleep(10 * time.Millisecond)
		err = unix.Bind(fd, sa)
	}
	if err != nil {
		if cfg.CopyMode == ZeroCopyForce && errors.Is(err, unix.EOPNOTSUPP) {
			return nil, notSupported("bind to %s queue %d in zero-copy mode: the driver has no AF_XDP zero-copy; use copy mode", cfg.Interface, cfg.Queue)
		}
		if errors.Is(err, unix.EINVAL) {
			return nil, fmt.Errorf("afxdp: bind to %s queue %d: %w (is the queue id below the interface's queue count?)", cfg.Interface, cfg.Queue, os.NewSyscallError("bind", err))
		}
		return nil, classify(fmt.Sprintf("bind to %s queue %d", cfg.Interface, cfg.Queue), err)
	}
	s.features.NeedWakeup = true
	var opts [1]uint32
	if err := getsockopt(fd, unix.XDP_OPTIONS, unsafe.Pointer(&opts[0]), 4); err == nil {
		s.features.ZeroCopy = opts[0]&unix.XDP_OPTIONS_ZEROCOPY != 0
	}
	if cfg.TX && !s.features.ZeroCopy {
		// A copy-mode wake-up sends at most this many frames; the kernel's
		// default (32) costs a system call per 32 frames.
		s.features.TxBudget = 32
		if unix.SetsockoptInt(fd, unix.SOL_XDP, unix.XDP_MAX_TX_SKB_BUDGET, cfg.TxBudget) == nil {
			s.features.TxBudget = cfg.TxBudget
		}
		s.features.SendBuffer = setSendBuffer(fd, s.txChunks*txSkbBytes)
	}
	if cfg.RX {
		if err := s.xsks.Put(uint32(cfg.Queue), uint32(fd)); err != nil {
			return nil, fmt.Errorf("afxdp: put socket in xsk map: %w", err)
		}
		s.initRx()
	}
	if cfg.TX {
		s.initTx()
	}
	s.monoToReal = clockOffset()
	return s, nil
}

// attach loads the XDP program and attaches it in the configured mode:
// native first, then generic, for XDPAuto.
func (s *Socket) attach(mapEntries int) error {
	// Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK; later ones
	// to the memory cgroup, where this does nothing.
	if err := rlimit.RemoveMemlock(); err != nil {
		return notSupported("raise RLIMIT_MEMLOCK for the XDP program: %v: run as root or raise ulimit -l", err)
	}
	var err error
	if s.xsks, err = newXSKMap(max(mapEntries, s.cfg.Queue+1)); err != nil {
		return classifyBPF("create xsk map", err)
	}
	if s.prog, s.stamp, s.features.StampFallback, err = loadRedirect(s.cfg.DstPort, s.xsks, s.cfg.Stamp); err != nil {
		if errors.Is(err, ErrNotSupported) {
			return err
		}
		return classifyBPF("load xdp program", err)
	}
	modes := []struct {
		flag link.XDPAttachFlags
		name string
	}{{link.XDPDriverMode, "native"}, {link.XDPGenericMode, "generic"}}
	switch s.cfg.XDPMode {
	case XDPNative:
		modes = modes[:1]
	case XDPGeneric:
		modes = modes[1:]
	}
	var errs []error
	for _, m := range modes {
		l, err := link.AttachXDP(link.XDPOptions{Program: s.prog, Interface: s.ifindex, Flags: m.flag})
		if err == nil {
			s.link = l
			s.features.XDPMode = m.name
			s.features.RxTimestamp = map[Stamp]string{StampMeta: "xdp-meta", StampHead: "xdp-head", StampUser: "user"}[s.stamp]
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", m.name, err))
	}
	err = errors.Join(errs...)
	if errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("afxdp: attach xdp program to %s: another XDP program is attached; detach it (ip link set dev %s xdp off): %w",
			s.cfg.Interface, s.cfg.Interface, err)
	}
	if errors.Is(err, unix.EPERM) {
		return classify("attach xdp program to "+s.cfg.Interface, err)
	}
	return notSupported("attach xdp program to %s (%v): the driver (or the kernel, for generic mode before 4.12 and links before 5.9) has no XDP", s.cfg.Interface, err)
}

// classify turns a socket system call's error into one that says what is
// missing: the kernel's AF_XDP, the privileges, or the driver.
func classify(what string, err error) error {
	switch {
	case errors.Is(err, unix.EAFNOSUPPORT), errors.Is(err, unix.ENOPROTOOPT):
		return fmt.Errorf("%w (%s: %w): the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS, Linux 4.18+); %s", ErrNotSupported, what, err, Fallback)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w (%s: %w): AF_XDP needs CAP_NET_RAW, CAP_NET_ADMIN and CAP_BPF (run as root); %s", ErrNotSupported, what, err, Fallback)
	case errors.Is(err, unix.EOPNOTSUPP):
		return fmt.Errorf("%w (%s: %w): the driver does not support AF_XDP here; %s", ErrNotSupported, what, err, Fallback)
	}
	return fmt.Errorf("afxdp: %s: %w", what, err)
}

// classifyBPF names what is missing when a BPF map or program fails.
func classifyBPF(what string, err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w (%s: %w): loading XDP programs needs CAP_BPF and CAP_NET_ADMIN, or root; %s", ErrNotSupported, what, err, Fallback)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%w (%s: %v): the kernel lacks XDP or XSKMAP (CONFIG_BPF_SYSCALL, CONFIG_XDP_SOCKETS); %s", ErrNotSupported, what, err, Fallback)
	}
	return fmt.Errorf("afxdp: %s: %w", what, err)
}

func setsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), n, 0)
	if e != 0 {
		return e
	}
	return nil
}

func getsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	l := uint32(n)
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return e
	}
	return nil
}

// clockOffset is CLOCK_REALTIME − CLOCK_MONOTONIC in ns, the monotonic
// clock read between two realtime readings (the closest pair of three).
// txSkbBytes is what one frame in flight may charge to a copy-mode
// socket's send buffer: the kernel's copy of a frame of up to a 2048-byte
// chunk, its headroom and the skb around it (a 64-byte frame charges about
// 0.8 KB, a 1518-byte one about 4.5 KB).
const txSkbBytes = 4608

// setSendBuffer sets a copy-mode socket's send buffer to hold bytes
// (SO_SNDBUFFORCE, else SO_SNDBUF up to net.core.wmem_max) and returns what
// the kernel set (it doubles the value asked). In copy mode every frame in
// flight is an skb charged to the socket until the kernel frees it, on a
// veth when the peer (the DUT) is done with it, its ingress backlog
// included; with the default buffer (~200 KB, ~270 frames of 64 bytes) a
// wake-up is refused (EAGAIN) long before the DUT's 1000-frame backlog
// fills, and the tester's own buffer read as the DUT holding it back. With
// room for every TX chunk, the UMEM is the only limit of frames in flight.
func setSendBuffer(fd, bytes int) int {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, bytes) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bytes)
	}
	n, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	return n
}

func clockOffset() int64 {
	best, off := int64(1<<62), int64(0)
	for range 3 {
		var m unix.Timespec
		a := time.Now().UnixNano()
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m)
		b := time.Now().UnixNano()
		if b-a < best {
			best, off = b-a, (a+b)/2-m.Nano()
		}
	}
	return off
}

// Features is what the probe found when the socket opened.
func (s *Socket) Features() Features { return s.features }

// FD is the socket's file descriptor.
func (s *Socket) FD() int { return s.fd }

// Stats returns the socket's counters with the kernel's XDP_STATISTICS.
// Call it while no Send or Receive runs (e.g. between two batches).
func (s *Socket) Stats() (Stats, error) {
	st := Stats{TxQueued: s.txQueued, TxCompleted: s.txCompleted, TxDeviceDrops: s.txDeviceDrops, RxFrames: s.rxFrames, RxUserStamps: s.rxUserStamps}
	var ks unix.XDPStatistics
	if err := getsockopt(s.fd, unix.XDP_STATISTICS, unsafe.Pointer(&ks), unsafe.Sizeof(ks)); err != nil {
		return st, fmt.Errorf("afxdp: read statistics: %w", os.NewSyscallError("getsockopt XDP_STATISTICS", err))
	}
	st.RxDropped, st.RxInvalid, st.TxInvalid = ks.Rx_dropped, ks.Rx_invalid_descs, ks.Tx_invalid_descs
	st.RxRingFull, st.FillRingEmpty, st.TxRingEmpty = ks.Rx_ring_full, ks.Rx_fill_ring_empty_descs, ks.Tx_ring_empty_descs
	return st, nil
}

// Close detaches the XDP program, closes the socket and unmaps its memory.
// Frames still on the TX ring are abandoned: call Flush first to wait.
func (s *Socket) Close() error {
	var errs []error
	if s.shared {
		// The owner's program and map: only take this socket out of the map.
		if s.xsks != nil && s.fd >= 0 {
			_ = s.xsks.Delete(uint32(s.cfg.Queue))
		}
		s.prog, s.xsks = nil, nil
	}
	if s.link != nil {
		errs = append(errs, s.link.Close())
		s.link = nil
	}
	if s.prog != nil {
		errs = append(errs, s.prog.Close())
		s.prog = nil
	}
	if s.xsks != nil {
		errs = append(errs, s.xsks.Close())
		s.xsks = nil
	}
	for _, r := range []*ring{ringOf(s.fill), ringOf(s.comp), descRingOf(s.rx), descRingOf(s.tx)} {
		if r != nil {
			r.unmap()
		}
	}
	if s.fd >= 0 {
		errs = append(errs, unix.Close(s.fd))
		s.fd = -1
	}
	if s.umem != nil {
		errs = append(errs, unix.Munmap(s.umem))
		s.umem = nil
	}
	return errors.Join(errs...)
}

func ringOf(r *addrRing) *ring {
	if r == nil {
		return nil
	}
	return &r.ring
}

func descRingOf(r *descRing) *ring {
	if r == nil {
		return nil
	}
	return &r.ring
}
