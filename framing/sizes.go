package framing

import (
	"errors"
	"fmt"
)

// Proto is the network and transport protocol of a test frame.
type Proto int

// Protocols of test frames.
const (
	// IPv4UDP is Ethernet II + IPv4 (20-byte header, no options) + UDP.
	IPv4UDP Proto = iota + 1
	// IPv6UDP is Ethernet II + IPv6 (40-byte header, no extension headers) + UDP.
	IPv6UDP
)

// String returns "IPv4/UDP" or "IPv6/UDP".
func (p Proto) String() string {
	switch p {
	case IPv4UDP:
		return "IPv4/UDP"
	case IPv6UDP:
		return "IPv6/UDP"
	}
	return fmt.Sprintf("Proto(%d)", int(p))
}

// valid reports whether p is one of the defined protocols.
func (p Proto) valid() bool { return p == IPv4UDP || p == IPv6UDP }

// Header lengths, in bytes.
const (
	// IPv4HeaderLen is an IPv4 header without options.
	IPv4HeaderLen = 20
	// IPv6HeaderLen is the fixed IPv6 header.
	IPv6HeaderLen = 40
	// UDPHeaderLen is the UDP header.
	UDPHeaderLen = 8
)

// MaxJumbo is the largest frame size, in bytes (FCS included), that framing
// builds: 9216, the largest size RFC 5180 lists and the largest frame most
// jumbo-capable NICs and switches accept (MTU 9198 untagged). Larger frames
// are refused rather than silently truncated by a NIC.
const MaxJumbo = 9216

// StandardSizes are the RFC 2544 §9.1 Ethernet frame sizes in bytes, FCS
// included. Treat as read-only.
var StandardSizes = []int{64, 128, 256, 512, 1024, 1280, 1518}

// JumboSizes are the larger frame sizes RFC 5180 §5.1.1 adds, in bytes, FCS
// included: 2048, the jumbo sizes 4096 and 8192, 9018 (the largest untagged
// frame on a 9000-byte MTU path) and 9216 (MaxJumbo, needs MTU 9198). Sizes a
// path cannot carry are rejected by ValidateFrameSize with ErrAboveMTU and
// reported as zero throughput (RFC 5180 §5.1.1). Treat as read-only.
var JumboSizes = []int{2048, 4096, 8192, 9018, 9216}

// Errors of ValidateFrameSize, for errors.Is. The returned error is a
// *FrameSizeError wrapping one of them.
var (
	// ErrFrameTooSmall: the frame cannot hold the headers and the test signature.
	ErrFrameTooSmall = errors.New("frame too small")
	// ErrFrameTooLarge: the frame is above MaxJumbo.
	ErrFrameTooLarge = errors.New("frame too large")
	// ErrAboveMTU: the frame's IP packet does not fit the path MTU.
	ErrAboveMTU = errors.New("frame above path mtu")
)

// FrameSizeError describes a frame size ValidateFrameSize refused.
type FrameSizeError struct {
	// Size is the refused frame size in bytes, FCS included.
	Size int
	// Limit is the bound it broke, in bytes: the smallest frame for
	// ErrFrameTooSmall, the largest for ErrFrameTooLarge and ErrAboveMTU.
	Limit int
	// Proto and VLAN are the frame format the size was checked for.
	Proto Proto
	VLAN  bool
	// MTU is the path MTU in bytes the size was checked against (0 = none).
	MTU int
	// Err is ErrFrameTooSmall, ErrFrameTooLarge or ErrAboveMTU.
	Err error
}

// Error names the field, the value, the bound and the fix.
func (e *FrameSizeError) Error() string {
	format := e.Proto.String()
	if e.VLAN {
		format += " with an 802.1Q tag"
	}
	switch e.Err {
	case ErrFrameTooSmall:
		return fmt.Sprintf("frame size %d: below %d bytes, the smallest %s frame that carries the %d-byte test signature; use a frame size of at least %d",
			e.Size, e.Limit, format, SignatureLen, e.Limit)
	case ErrFrameTooLarge:
		return fmt.Sprintf("frame size %d: above %d bytes, the largest jumbo frame supported; use a frame size of at most %d",
			e.Size, e.Limit, e.Limit)
	case ErrAboveMTU:
		l2 := "14 Ethernet header + 4 FCS"
		if e.VLAN {
			l2 = "14 Ethernet header + 4 802.1Q tag + 4 FCS"
		}
		return fmt.Sprintf("frame size %d: does not fit path MTU %d (largest %s frame: %d bytes = MTU + %s); use a frame size of at most %d or raise the MTU on every hop to at least %d",
			e.Size, e.MTU, format, e.Limit, l2, e.Limit, e.Size-l2Overhead(e.VLAN))
	}
	return fmt.Sprintf("frame size %d: %v", e.Size, e.Err)
}

// Unwrap returns the sentinel (ErrFrameTooSmall, ErrFrameTooLarge or ErrAboveMTU).
func (e *FrameSizeError) Unwrap() error { return e.Err }

// l2Overhead is the bytes of a frame outside its IP packet: Ethernet header,
// FCS and the optional 802.1Q tag.
func l2Overhead(vlan bool) int {
	if vlan {
		return EthHeaderLen + VLANTagLen + FCSLen
	}
	return EthHeaderLen + FCSLen
}

// HeaderOverhead is the bytes of a frame, FCS included, that are not UDP
// payload: 46 for IPv4/UDP, 66 for IPv6/UDP, 4 more with an 802.1Q tag.
// It is 0 for an unknown proto.
func HeaderOverhead(proto Proto, vlan bool) int {
	switch proto {
	case IPv4UDP:
		return l2Overhead(vlan) + IPv4HeaderLen + UDPHeaderLen
	case IPv6UDP:
		return l2Overhead(vlan) + IPv6HeaderLen + UDPHeaderLen
	}
	return 0
}

// UDPPayloadSize is the UDP payload, in bytes, of a frame of frameSize bytes
// (FCS included): F−46 for IPv4/UDP, F−66 for IPv6/UDP, 4 less with an
// 802.1Q tag. It is the datagram size a UDP-socket transport sends for that
// frame size. It may be negative for frames too small; validate first.
func UDPPayloadSize(frameSize int, proto Proto, vlan bool) int {
	return frameSize - HeaderOverhead(proto, vlan)
}

// FrameSizeForPayload is the inverse of UDPPayloadSize: the frame size, in
// bytes with FCS, that carries a UDP payload of payload bytes.
func FrameSizeForPayload(payload int, proto Proto, vlan bool) int {
	return payload + HeaderOverhead(proto, vlan)
}

// IPPacketSize is the IP packet, in bytes (IPv4 total length, or the 40-byte
// IPv6 header plus its payload length), of a frame of frameSize bytes: F−18,
// F−22 with an 802.1Q tag. This is what must fit the path MTU.
func IPPacketSize(frameSize int, vlan bool) int {
	return frameSize - l2Overhead(vlan)
}

// UDPPayloadOffset is the offset, in bytes from the first byte of the
// destination MAC, of the UDP payload (where the test signature starts):
// 42 for IPv4/UDP, 62 for IPv6/UDP, 4 more with an 802.1Q tag. It is 0 for
// an unknown proto. Receivers can use it to build socket filters.
func UDPPayloadOffset(proto Proto, vlan bool) int {
	if !proto.valid() {
		return 0
	}
	return HeaderOverhead(proto, vlan) - FCSLen
}

// MinEthernetFrame is the smallest Ethernet frame, in bytes with FCS.
const MinEthernetFrame = 64

// MinFrameSize is the smallest frame size, in bytes with FCS, that carries
// the headers of proto plus the SignatureLen-byte test signature, and is at
// least a legal 64-byte Ethernet frame: 64 for IPv4/UDP, 68 for IPv4/UDP with
// an 802.1Q tag, 84 for IPv6/UDP and 88 for IPv6/UDP with a tag. It is 0 for
// an unknown proto.
func MinFrameSize(proto Proto, vlan bool) int {
	if !proto.valid() {
		return 0
	}
	return max(MinEthernetFrame, HeaderOverhead(proto, vlan)+SignatureLen)
}

// MaxFrameForMTU is the largest frame size, in bytes with FCS, whose IP packet
// fits a path MTU of mtu bytes: mtu + 18 (14 Ethernet header + 4 FCS), + 4
// with an 802.1Q tag, capped at MaxJumbo. It is 0 when no test frame of proto
// fits (mtu too small for MinFrameSize, or an unknown proto).
func MaxFrameForMTU(mtu int, proto Proto, vlan bool) int {
	if !proto.valid() {
		return 0
	}
	f := min(mtu+l2Overhead(vlan), MaxJumbo)
	if f < MinFrameSize(proto, vlan) {
		return 0
	}
	return f
}

// ValidateFrameSize checks that a frame of size bytes (FCS included) can be
// sent as a test frame of proto, with or without an 802.1Q tag, on a path of
// pathMTU bytes. A pathMTU of 0 or less skips the MTU check. The error is a
// *FrameSizeError wrapping ErrFrameTooSmall, ErrFrameTooLarge or ErrAboveMTU;
// an unknown proto is a plain error. A mix code (see MixOf) is checked part
// by part, the error naming the mix.
func ValidateFrameSize(size int, proto Proto, vlan bool, pathMTU int) error {
	if !proto.valid() {
		return fmt.Errorf("frame protocol %v: want IPv4/UDP or IPv6/UDP", proto)
	}
	if m, ok := MixOf(size); ok {
		return validateMix(m, proto, vlan, pathMTU)
	}
	e := &FrameSizeError{Size: size, Proto: proto, VLAN: vlan}
	if min := MinFrameSize(proto, vlan); size < min {
		e.Limit, e.Err = min, ErrFrameTooSmall
		return e
	}
	if size > MaxJumbo {
		e.Limit, e.Err = MaxJumbo, ErrFrameTooLarge
		return e
	}
	if pathMTU > 0 && IPPacketSize(size, vlan) > pathMTU {
		e.Limit, e.MTU, e.Err = pathMTU+l2Overhead(vlan), pathMTU, ErrAboveMTU
		return e
	}
	return nil
}
