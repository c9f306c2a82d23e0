package afxdp

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotSupported is wrapped by every error that says AF_XDP cannot run
// here: the operating system, the kernel (no AF_XDP sockets or XDP
// programs), the driver, the privileges or the memory-lock limit. Its message
// names what is missing; callers fall back to the raw transport.
var ErrNotSupported = errors.New("AF_XDP is not available")

// Fallback is the advice every ErrNotSupported error ends with.
const Fallback = "use the raw transport (AF_PACKET) instead"

// notSupported wraps ErrNotSupported with what is missing and the fallback.
func notSupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s; %s", ErrNotSupported, fmt.Sprintf(format, args...), Fallback)
}

// XDPMode says where the XDP program that redirects test frames runs.
type XDPMode uint8

// XDP program modes.
const (
	// XDPAuto (the zero value) tries the driver's native hook and falls
	// back to the generic (skb) hook.
	XDPAuto XDPMode = iota
	// XDPNative runs the program in the driver (fails if it has no XDP).
	XDPNative
	// XDPGeneric runs the program on the skb path (any driver, slower).
	XDPGeneric
)

func (m XDPMode) String() string {
	switch m {
	case XDPAuto:
		return "auto"
	case XDPNative:
		return "native"
	case XDPGeneric:
		return "generic"
	}
	return fmt.Sprintf("XDPMode(%d)", uint8(m))
}

// CopyMode says how frames move between the UMEM and the NIC.
type CopyMode uint8

// Copy modes.
const (
	// CopyAuto (the zero value) lets the kernel use zero-copy where the
	// driver supports it for this queue and copy mode otherwise. A generic
	// XDP program always means copy mode.
	CopyAuto CopyMode = iota
	// CopyForce asks for copy mode (XDP_COPY).
	CopyForce
	// ZeroCopyForce asks for zero-copy (XDP_ZEROCOPY) and fails without it.
	ZeroCopyForce
)

func (m CopyMode) String() string {
	switch m {
	case CopyAuto:
		return "auto"
	case CopyForce:
		return "copy"
	case ZeroCopyForce:
		return "zero-copy"
	}
	return fmt.Sprintf("CopyMode(%d)", uint8(m))
}

// Defaults of Config.
const (
	DefaultFrames    = 4096
	DefaultChunkSize = 2048
	DefaultRingSize  = 2048
	// MetaLen is the metadata the XDP program writes in front of each
	// redirected frame: the kernel receive time (8 bytes), a magic word (4)
	// and padding (4).
	MetaLen = 16
)

// Config describes one AF_XDP socket bound to one queue of one interface.
// Every field's zero value is a documented default except Interface.
type Config struct {
	// Interface is the name of the network interface (required). Open runs
	// in the calling thread's network namespace.
	Interface string
	// Queue is the interface's receive/transmit queue id; 0 by default.
	Queue int
	// RX attaches the XDP program and receives test frames; TX sends. At
	// least one must be set.
	RX, TX bool
	// Frames is the number of UMEM chunks; 0 means DefaultFrames (4096).
	// With both RX and TX, half of them serve each direction. A power of two.
	Frames int
	// ChunkSize is the size of one UMEM chunk in bytes: 2048 or 4096; 0
	// means DefaultChunkSize (2048). A frame of F bytes (FCS included) needs
	// F−4+256 ≤ ChunkSize (the kernel keeps 256 bytes of headroom).
	ChunkSize int
	// RingSize is the number of descriptors of each ring (fill, completion,
	// RX, TX); 0 means DefaultRingSize (2048). A power of two.
	RingSize int
	// XDPMode picks the XDP hook for RX; zero tries native, then generic.
	XDPMode XDPMode
	// CopyMode picks zero-copy or copy; zero lets the kernel choose.
	CopyMode CopyMode
	// DstPort, when non-zero, makes the XDP program redirect only test
	// frames with this UDP destination port; zero redirects every frame
	// that carries the signature marker. Other frames go to the kernel.
	DstPort uint16
	// TxBudget is the number of frames one wake-up of a copy-mode socket
	// sends (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+); 0 means RingSize. Older
	// kernels keep their fixed 32 and Features.TxBudget says so.
	TxBudget int
	// Stamp picks where the XDP program writes each frame's receive time;
	// zero (StampAuto) takes the first the kernel accepts of StampMeta,
	// StampHead and StampUser. Tests force each one.
	Stamp Stamp
}

// Stamp says where a received frame's timestamp comes from.
type Stamp int

const (
	// StampAuto takes the first of StampMeta, StampHead and StampUser the
	// kernel's verifier accepts, and Features says which and why.
	StampAuto Stamp = iota
	// StampMeta: the XDP program reads the kernel's clock
	// (bpf_ktime_get_ns) and writes it into MetaLen bytes of XDP metadata
	// in front of the frame (bpf_xdp_adjust_meta).
	StampMeta
	// StampHead: the same clock reading, written into MetaLen bytes the
	// program prepends to the frame (bpf_xdp_adjust_head), which Receive
	// strips again: for kernels whose verifier refuses XDP programs
	// bpf_xdp_adjust_meta. The same clock at the same point: as exact as
	// StampMeta.
	StampHead
	// StampUser: no stamp from the program; Receive reads the clock when
	// it takes a batch from the ring, later than the kernel's reading by
	// the time the frame waited in the ring.
	StampUser
)

func (k Stamp) String() string {
	switch k {
	case StampAuto:
		return "auto"
	case StampMeta:
		return "metadata"
	case StampHead:
		return "head"
	case StampUser:
		return "user"
	}
	return fmt.Sprintf("Stamp(%d)", int(k))
}

// ParseStamp reads a Stamp by its String.
func ParseStamp(s string) (Stamp, error) {
	for k := StampAuto; k <= StampUser; k++ {
		if s == k.String() || s == "" && k == StampAuto {
			return k, nil
		}
	}
	return 0, fmt.Errorf("afxdp: receive stamp %q: want auto, metadata, head or user", s)
}

func (c Config) withDefaults() Config {
	if c.Frames == 0 {
		c.Frames = DefaultFrames
	}
	if c.ChunkSize == 0 {
		c.ChunkSize = DefaultChunkSize
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.TxBudget == 0 {
		c.TxBudget = c.RingSize
	}
	return c
}

// Validate checks c; the error names the bad field and the fix.
func (c Config) Validate() error {
	c = c.withDefaults()
	pow2 := func(n int) bool { return n > 0 && n&(n-1) == 0 }
	switch {
	case c.Interface == "":
		return errors.New("afxdp: interface: not set; name the port, e.g. p1")
	case !c.RX && !c.TX:
		return errors.New("afxdp: rx and tx: both false; a socket must receive, send or both")
	case c.Queue < 0:
		return fmt.Errorf("afxdp: queue %d: must be ≥ 0", c.Queue)
	case !pow2(c.Frames) || c.Frames < 2:
		return fmt.Errorf("afxdp: frames %d: must be a power of two ≥ 2", c.Frames)
	case c.ChunkSize != 2048 && c.ChunkSize != 4096:
		return fmt.Errorf("afxdp: chunk size %d: must be 2048 or 4096", c.ChunkSize)
	case !pow2(c.RingSize):
		return fmt.Errorf("afxdp: ring size %d: must be a power of two", c.RingSize)
	case c.XDPMode > XDPGeneric:
		return fmt.Errorf("afxdp: xdp mode %v: must be auto, native or generic", c.XDPMode)
	case c.CopyMode > ZeroCopyForce:
		return fmt.Errorf("afxdp: copy mode %v: must be auto, copy or zero-copy", c.CopyMode)
	case c.XDPMode == XDPGeneric && c.CopyMode == ZeroCopyForce:
		return errors.New("afxdp: xdp mode generic with zero-copy: the generic hook only copies; use native or copy mode")
	case c.TxBudget < 0:
		return fmt.Errorf("afxdp: tx budget %d: must be ≥ 0", c.TxBudget)
	case c.Stamp < StampAuto || c.Stamp > StampUser:
		return fmt.Errorf("afxdp: receive stamp %v: must be auto, metadata, head or user", c.Stamp)
	}
	return nil
}

// MaxFrameSize is the largest RFC 2544 frame size (FCS included) a chunk of
// chunkSize bytes carries whatever the Stamp: the chunk less the kernel's
// 256-byte headroom and the MetaLen bytes StampHead prepends, plus the FCS
// the NIC appends.
func MaxFrameSize(chunkSize int) int { return chunkSize - 256 - MetaLen + 4 }

// Features is what the probe found when the socket opened: which path runs.
type Features struct {
	// XDPMode is "native" or "generic" for an RX socket, "" for TX only.
	XDPMode string `json:"xdp_mode,omitempty"`
	// ZeroCopy is true when the kernel bound the socket in zero-copy mode.
	ZeroCopy bool `json:"zero_copy"`
	// NeedWakeup is true when the rings carry the need-wakeup flag, so the
	// sender makes a system call only when the kernel asks for one.
	NeedWakeup bool `json:"need_wakeup"`
	// TxBudget is the frames one wake-up sends in copy mode; 32 when the
	// kernel lacks XDP_MAX_TX_SKB_BUDGET.
	TxBudget int `json:"tx_budget,omitempty"`
	// SendBuffer is the copy-mode socket's send buffer in bytes (SO_SNDBUF
	// as the kernel set it): room for every TX chunk in flight unless the
	// process lacks CAP_NET_ADMIN and net.core.wmem_max is lower.
	SendBuffer int `json:"send_buffer,omitempty"`
	// RxTimestamp is the receive timestamp source of an RX socket (Stamp):
	// "xdp-meta" or "xdp-head" (the kernel's clock read by the XDP
	// program, in metadata or in front of the frame, then CLOCK_REALTIME by
	// a fixed offset) or "user" (read when the frame was taken from the
	// ring).
	RxTimestamp string `json:"rx_timestamp,omitempty"`
	// StampFallback, when the stamp is not the first choice of StampAuto,
	// says what the kernel refused, e.g. "the verifier refused
	// bpf_xdp_adjust_meta"; empty otherwise.
	StampFallback string `json:"stamp_fallback,omitempty"`
}

// String is a one-line summary for reports, e.g. "native, copy, need-wakeup".
func (f Features) String() string {
	var p []string
	if f.XDPMode != "" {
		p = append(p, f.XDPMode)
	}
	if f.ZeroCopy {
		p = append(p, "zero-copy")
	} else {
		p = append(p, "copy")
	}
	if f.NeedWakeup {
		p = append(p, "need-wakeup")
	}
	if f.TxBudget > 0 {
		p = append(p, fmt.Sprintf("tx budget %d", f.TxBudget))
	}
	if f.RxTimestamp != "" {
		p = append(p, "rx time "+f.RxTimestamp)
	}
	return strings.Join(p, ", ")
}

// Stats counts a socket's frames. The Tx and Rx counts are the socket's
// own; the rest are the kernel's XDP_STATISTICS.
type Stats struct {
	// TxQueued is frames put on the TX ring; TxCompleted is frames the
	// kernel handed back on the completion ring (sent, or dropped by the
	// driver after it took them).
	TxQueued, TxCompleted uint64
	// TxDeviceDrops is frames among TxCompleted that the device dropped on
	// transmit in copy mode (a veth: its peer's backlog was full, the
	// DUT's loss; a NIC driver: the tester's).
	TxDeviceDrops uint64
	// RxFrames is frames taken from the RX ring; RxUserStamps those of them
	// that carried no kernel timestamp and were stamped when read.
	RxFrames, RxUserStamps uint64
	// RxDropped: frames dropped for other reasons than the rings (e.g. too
	// long for a chunk). RxRingFull: frames dropped because the RX ring
	// was full — a receiver limit, never the DUT's loss. FillRingEmpty:
	// times the kernel found no free chunk. RxInvalid, TxInvalid: bad
	// descriptors. TxRingEmpty: wake-ups that found nothing to send.
	RxDropped, RxInvalid, TxInvalid, RxRingFull, FillRingEmpty, TxRingEmpty uint64
}

// Frame is one received frame.
type Frame struct {
	// Data is the frame from the destination MAC on, without FCS. It points
	// into the UMEM and stays valid until the next Receive call.
	Data []byte
	// RxNs is the receive time, CLOCK_REALTIME ns (see Features.RxTimestamp).
	RxNs int64
}
