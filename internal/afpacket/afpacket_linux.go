//go:build linux

package afpacket

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Slot status values of TPACKET_V2 rings (linux/if_packet.h).
const (
	StatusKernel       = unix.TP_STATUS_KERNEL
	StatusUser         = unix.TP_STATUS_USER
	StatusLosing       = unix.TP_STATUS_LOSING
	StatusAvailable    = unix.TP_STATUS_AVAILABLE
	StatusSendRequest  = unix.TP_STATUS_SEND_REQUEST
	StatusSending      = unix.TP_STATUS_SENDING
	StatusWrongFormat  = unix.TP_STATUS_WRONG_FORMAT
	StatusTSSoftware   = unix.TP_STATUS_TS_SOFTWARE
	StatusTSRawHW      = unix.TP_STATUS_TS_RAW_HARDWARE
	hdrLen             = 32 // TPACKET_ALIGN(sizeof(struct tpacket2_hdr))
	txDataOffset       = hdrLen
	tpacketAlignment   = 16
	ethPAll            = unix.ETH_P_ALL
	defaultPollTimeout = 100 * time.Millisecond
)

// Socket is an AF_PACKET SOCK_RAW socket for one interface. Until Bind it
// receives nothing (protocol 0), so a filter can be attached first.
type Socket struct {
	fd      int
	ifindex int
	name    string
	ring    []byte // mmapped ring memory, if any
}

// Open creates an unbound raw packet socket for the interface name. It must
// be called inside the interface's network namespace. Errors keep
// errors.Is(err, os.ErrPermission) working.
func Open(name string) (*Socket, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up interface %q: %w", name, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	return &Socket{fd: fd, ifindex: ifi.Index, name: name}, nil
}

// Ifindex is the interface index the socket is for.
func (s *Socket) Ifindex() int { return s.ifindex }

// FD is the socket's file descriptor (for poll).
func (s *Socket) FD() int { return s.fd }

// Bind binds the socket to its interface for protocol proto (host order;
// unix.ETH_P_ALL for every frame, 0 for a send-only socket).
func (s *Socket) Bind(proto uint16) error {
	sa := &unix.SockaddrLinklayer{Protocol: htons(proto), Ifindex: s.ifindex}
	if err := unix.Bind(s.fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// AttachFilter installs a classic BPF program (SO_ATTACH_FILTER), replacing
// any previous one.
func (s *Socket) AttachFilter(prog []bpf.RawInstruction) error {
	if len(prog) == 0 {
		return errors.New("attach filter: empty program")
	}
	f := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		f[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	if err := unix.SetsockoptSockFprog(s.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &fp); err != nil {
		return os.NewSyscallError("setsockopt SO_ATTACH_FILTER", err)
	}
	return nil
}

// SetQdiscBypass sets PACKET_QDISC_BYPASS: frames go straight to the driver.
func (s *Socket) SetQdiscBypass() error {
	return setInt(s.fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS")
}

// SetIgnoreOutgoing sets PACKET_IGNORE_OUTGOING: the socket does not see
// frames the host sends on the interface.
func (s *Socket) SetIgnoreOutgoing() error {
	return setInt(s.fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING")
}

// SetSendBuffer sets SO_SNDBUFFORCE (falling back to SO_SNDBUF).
func (s *Socket) SetSendBuffer(bytes int) error {
	if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, bytes); err == nil {
		return nil
	}
	return setInt(s.fd, unix.SOL_SOCKET, unix.SO_SNDBUF, bytes, "SO_SNDBUF")
}

// EnableSoftwareTimestamps asks for software receive timestamps in ring
// headers (PACKET_TIMESTAMP with SOF_TIMESTAMPING_SOFTWARE|RX_SOFTWARE):
// CLOCK_REALTIME read when the frame reaches the socket, unless the skb
// already carries a receive stamp. It deliberately does not set
// SO_TIMESTAMPNS, which would make the kernel stamp every received packet of
// every interface (net_enable_timestamp): a cost on the forwarding CPU.
func (s *Socket) EnableSoftwareTimestamps() error {
	return setInt(s.fd, unix.SOL_PACKET, unix.PACKET_TIMESTAMP,
		unix.SOF_TIMESTAMPING_SOFTWARE|unix.SOF_TIMESTAMPING_RX_SOFTWARE, "PACKET_TIMESTAMP")
}

func setInt(fd, level, opt, v int, name string) error {
	if err := unix.SetsockoptInt(fd, level, opt, v); err != nil {
		return os.NewSyscallError("setsockopt "+name, err)
	}
	return nil
}

// FetchStats reads PACKET_STATISTICS raw; the kernel resets the counters.
// Parse the result with ParseStats.
func (s *Socket) FetchStats(buf *[8]byte) error {
	l := uint32(len(buf))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(s.fd), unix.SOL_PACKET, unix.PACKET_STATISTICS,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return os.NewSyscallError("getsockopt PACKET_STATISTICS", e)
	}
	return nil
}

// Ring is a TPACKET_V2 ring of Frames slots of FrameSize bytes each. Slot i
// starts with a struct tpacket2_hdr whose status word is shared with the
// kernel.
type Ring struct {
	mem       []byte
	FrameSize int
	Frames    int
}

// SlotSize returns the slot size (a power of two, at least 128) that holds a
// frame of n bytes behind the TX header.
func SlotSize(n int) int {
	s := 128
	for s < txDataOffset+n {
		s <<= 1
	}
	return s
}

// SetupRing sets TPACKET_V2 and creates and maps a ring of frames slots of
// frameSize bytes (a power of two ≥ 128) for transmit (tx) or receive. One
// socket holds at most one ring here.
func (s *Socket) SetupRing(tx bool, frameSize, frames int) (*Ring, error) {
	if s.ring != nil {
		return nil, errors.New("setup ring: socket already has a ring")
	}
	if frameSize < 128 || frameSize&(frameSize-1) != 0 {
		return nil, fmt.Errorf("setup ring: frame size %d must be a power of two ≥ 128", frameSize)
	}
	if err := setInt(s.fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V2, "PACKET_VERSION"); err != nil {
		return nil, err
	}
	page := os.Getpagesize()
	block := max(page, frameSize)
	for block < 1<<16 && block < frameSize*frames {
		block <<= 1
	}
	perBlock := block / frameSize
	blocks := (frames + perBlock - 1) / perBlock
	req := unix.TpacketReq{Block_size: uint32(block), Block_nr: uint32(blocks),
		Frame_size: uint32(frameSize), Frame_nr: uint32(blocks * perBlock)}
	opt, name := unix.PACKET_RX_RING, "PACKET_RX_RING"
	if tx {
		opt, name = unix.PACKET_TX_RING, "PACKET_TX_RING"
	}
	if err := unix.SetsockoptTpacketReq(s.fd, unix.SOL_PACKET, opt, &req); err != nil {
		return nil, os.NewSyscallError("setsockopt "+name, err)
	}
	mem, err := unix.Mmap(s.fd, 0, block*blocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap ring", err)
	}
	s.ring = mem
	return &Ring{mem: mem, FrameSize: frameSize, Frames: blocks * perBlock}, nil
}

func (r *Ring) statusWord(i int) *uint32 {
	return (*uint32)(unsafe.Pointer(&r.mem[i*r.FrameSize]))
}

// Status reads slot i's status atomically.
func (r *Ring) Status(i int) uint32 { return atomic.LoadUint32(r.statusWord(i)) }

// SetStatus writes slot i's status atomically, handing the slot over.
func (r *Ring) SetStatus(i int, st uint32) { atomic.StoreUint32(r.statusWord(i), st) }

// RequestSend marks TX slot i for sending with a plain store. The kernel
// reads TX slots only inside the send call that follows (a Kick), and the
// compiler cannot move a store past that call, so the full barrier of an
// atomic store is not needed on the per-frame path.
func (r *Ring) RequestSend(i int) { *r.statusWord(i) = StatusSendRequest }

// TxData is the frame area of TX slot i (FrameSize − 32 bytes).
func (r *Ring) TxData(i int) []byte {
	off := i * r.FrameSize
	return r.mem[off+txDataOffset : off+r.FrameSize : off+r.FrameSize]
}

// SetTxLen sets slot i's frame length; call before SetStatus(SendRequest).
func (r *Ring) SetTxLen(i int, n int) {
	off := i * r.FrameSize
	*(*uint32)(unsafe.Pointer(&r.mem[off+4])) = uint32(n)
}

// RxFrame returns the captured bytes of RX slot i, the frame's original
// length and its kernel timestamp (ns since the Unix epoch). Call only while
// Status(i)&StatusUser is set.
func (r *Ring) RxFrame(i int) (data []byte, origLen int, tsNs int64) {
	off := i * r.FrameSize
	h := (*unix.Tpacket2Hdr)(unsafe.Pointer(&r.mem[off]))
	start := off + int(h.Mac)
	end := start + int(h.Snaplen)
	if int(h.Mac) >= r.FrameSize || end > off+r.FrameSize {
		return nil, int(h.Len), 0
	}
	return r.mem[start:end:end], int(h.Len), int64(h.Sec)*1e9 + int64(h.Nsec)
}

// Kick asks the kernel to send every slot marked SendRequest (sendto with no
// data). With wait false it returns at once (MSG_DONTWAIT); with wait true it
// returns when every pending frame was handed to the driver.
func (s *Socket) Kick(wait bool) error {
	flags := 0
	if !wait {
		flags = unix.MSG_DONTWAIT
	}
	for {
		var e unix.Errno
		if wait {
			_, _, e = unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, uintptr(flags), 0, 0)
		} else {
			// A non-blocking kick never sleeps: a raw syscall spares the
			// scheduler's syscall bookkeeping (and sysmon's hand-off of
			// the P every 20 µs while the kernel sends the batch).
			_, _, e = unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, uintptr(flags), 0, 0)
		}
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return os.NewSyscallError("sendto", e)
	}
}

// Send writes one whole frame (no ring) on the bound interface.
func (s *Socket) Send(frame []byte) error {
	for {
		_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&frame[0])), uintptr(len(frame)), 0, 0, 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return os.NewSyscallError("sendto", e)
	}
}

// Poll waits up to timeout for the socket to become readable (a ring slot
// handed to user space). It reports whether it did.
func (s *Socket) Poll(timeout time.Duration, events int16) (bool, error) {
	fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: events}}
	n, err := unix.Poll(fds[:], int(timeout.Milliseconds()))
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return false, nil
		}
		return false, os.NewSyscallError("poll", err)
	}
	return n > 0, nil
}

// PollIn is the poll event for readable.
const PollIn = unix.POLLIN

// Close unmaps the ring and closes the socket.
func (s *Socket) Close() error {
	if s.ring != nil {
		_ = unix.Munmap(s.ring)
		s.ring = nil
	}
	if s.fd < 0 {
		return nil
	}
	err := unix.Close(s.fd)
	s.fd = -1
	return err
}

// NewMemRing returns a ring in ordinary memory that no kernel reads: for
// tests of code that fills or drains rings.
func NewMemRing(frameSize, frames int) *Ring {
	return &Ring{mem: make([]byte, frameSize*frames), FrameSize: frameSize, Frames: frames}
}

// AddUnicast adds mac to the interface's unicast address filter for as long
// as the socket is open (PACKET_ADD_MEMBERSHIP, PACKET_MR_UNICAST), so the
// NIC accepts frames for an address the tester emulates.
func (s *Socket) AddUnicast(mac [6]byte) error {
	mr := unix.PacketMreq{Ifindex: int32(s.ifindex), Type: unix.PACKET_MR_UNICAST, Alen: 6}
	copy(mr.Address[:], mac[:])
	if err := unix.SetsockoptPacketMreq(s.fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr); err != nil {
		return os.NewSyscallError("setsockopt PACKET_ADD_MEMBERSHIP", err)
	}
	return nil
}

// AddMulticast adds the multicast group mac to the interface's filter for
// as long as the socket is open (PACKET_MR_MULTICAST), e.g. an IPv6
// solicited-node group.
func (s *Socket) AddMulticast(mac [6]byte) error {
	mr := unix.PacketMreq{Ifindex: int32(s.ifindex), Type: unix.PACKET_MR_MULTICAST, Alen: 6}
	copy(mr.Address[:], mac[:])
	if err := unix.SetsockoptPacketMreq(s.fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr); err != nil {
		return os.NewSyscallError("setsockopt PACKET_ADD_MEMBERSHIP", err)
	}
	return nil
}
