package framing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Signature is what every test frame carries at the start of its UDP payload
// so the receiver can tell test frames from other traffic, attribute them to
// a run and a stream, find loss, reordering and duplicates, and time them.
//
// Wire layout: SignatureLen (18) bytes starting at the first UDP payload
// byte, so it fits the 18-byte payload of a 64-byte IPv4/UDP frame. Integers
// are big-endian (network order):
//
//	offset size field
//	0      1    marker: always SignatureMarker (0xC5)
//	1      1    RunID
//	2      2    StreamID
//	4      6    Seq, its low 48 bits
//	10     8    TxNs, two's complement
//
// The marker differs from the first byte of the payload pattern (00), so an
// unstamped template frame is never taken for a test frame. It is one byte
// only; a receiver also matches ports, addresses and StreamID, and
// RunID keeps frames of one trial that arrive late out of the next trial.
// Every field starts at an even offset from the UDP header, so each is made
// of whole 16-bit checksum words.
type Signature struct {
	// RunID identifies the trial; the engine changes it for every trial so
	// late frames of an earlier trial are not counted (it wraps after 256).
	RunID uint8
	// StreamID is trials.Stream.ID.
	StreamID uint16
	// Seq is the frame's sequence number within its stream, from 0. Only its
	// low 48 bits travel (MaxSeq); at 14.88 Mframe/s that lasts 218 days.
	Seq uint64
	// TxNs is the transmit time in nanoseconds on the engine's clock (e.g.
	// CLOCK_REALTIME Unix ns, or the clock the receive timestamps use).
	TxNs int64
}

// Signature wire constants.
const (
	// SignatureLen is the signature's length in bytes.
	SignatureLen = 18
	// SignatureMarker is the first signature byte.
	SignatureMarker = 0xC5
	// MaxSeq is the largest sequence number the signature carries (2^48−1).
	MaxSeq = 1<<48 - 1
)

// ErrNotTestFrame is returned (possibly wrapped, test with errors.Is) for
// input that is not a well-formed test frame or signature.
var ErrNotTestFrame = errors.New("not a test frame")

// Detailed decode errors, built once so decoding never allocates.
var (
	errShortSignature = fmt.Errorf("%w: payload shorter than the %d-byte signature", ErrNotTestFrame, SignatureLen)
	errMarker         = fmt.Errorf("%w: no signature marker %#02x", ErrNotTestFrame, SignatureMarker)
	errTruncated      = fmt.Errorf("%w: truncated headers", ErrNotTestFrame)
	errEtherType      = fmt.Errorf("%w: ethertype is not IPv4, IPv6 or 802.1Q", ErrNotTestFrame)
	errIPVersion      = fmt.Errorf("%w: ip version does not match ethertype", ErrNotTestFrame)
	errIPHeaderLen    = fmt.Errorf("%w: bad ipv4 header length", ErrNotTestFrame)
	errIPLength       = fmt.Errorf("%w: ip length does not fit the frame", ErrNotTestFrame)
	errFragment       = fmt.Errorf("%w: ipv4 fragment", ErrNotTestFrame)
	errNotUDP         = fmt.Errorf("%w: not udp (or ipv6 extension headers)", ErrNotTestFrame)
	errUDPLength      = fmt.Errorf("%w: udp length does not match the ip payload", ErrNotTestFrame)
)

// EncodeSignature writes sig into the first SignatureLen bytes of p (see
// Signature for the layout). It panics if p is shorter. It does not allocate.
func EncodeSignature(p []byte, sig Signature) {
	_ = p[SignatureLen-1]
	p[0] = SignatureMarker
	p[1] = sig.RunID
	binary.BigEndian.PutUint16(p[2:], sig.StreamID)
	binary.BigEndian.PutUint16(p[4:], uint16(sig.Seq>>32))
	binary.BigEndian.PutUint32(p[6:], uint32(sig.Seq))
	binary.BigEndian.PutUint64(p[10:], uint64(sig.TxNs))
}

// DecodeSignature reads the signature at the start of a UDP payload. It
// returns an error wrapping ErrNotTestFrame if payload is shorter than
// SignatureLen or does not start with SignatureMarker. It does not allocate.
func DecodeSignature(payload []byte) (Signature, error) {
	if len(payload) < SignatureLen {
		return Signature{}, errShortSignature
	}
	if payload[0] != SignatureMarker {
		return Signature{}, errMarker
	}
	return Signature{
		RunID:    payload[1],
		StreamID: binary.BigEndian.Uint16(payload[2:]),
		Seq:      uint64(binary.BigEndian.Uint16(payload[4:]))<<32 | uint64(binary.BigEndian.Uint32(payload[6:])),
		TxNs:     int64(binary.BigEndian.Uint64(payload[10:])),
	}, nil
}

// Stamp writes sig into frame, a copy of Bytes() (e.g. from CopyTo), and
// fixes the UDP checksum: for IPv6 and for IPv4 with UDPChecksum it is
// updated from the template's precomputed partial sum (RFC 1624 style: only
// the 9 signature words are summed, whatever the frame size); for IPv4
// without it stays 0. The IPv4 header checksum covers no payload and stays
// valid. Stamp does not allocate; it panics if frame is shorter than Len().
// Stamping the same buffer again with another signature is fine.
func (t *Template) Stamp(frame []byte, sig Signature) {
	_ = frame[len(t.frame)-1]
	s := frame[t.payloadOff : t.payloadOff+SignatureLen]
	EncodeSignature(s, sig)
	if t.csumOn {
		binary.BigEndian.PutUint16(frame[t.csumOff:], t.udpChecksum(s))
	}
}

// WriteFrame copies the template into dst (e.g. a TX ring slot), stamps sig
// and returns Len(), the number of bytes to send. It does not allocate; it
// panics if dst is shorter than Len().
func (t *Template) WriteFrame(dst []byte, sig Signature) int {
	n := t.CopyTo(dst)
	t.Stamp(dst, sig)
	return n
}

// FrameInfo is what ParseFrame learns from a test frame's headers.
type FrameInfo struct {
	// Proto is IPv4UDP or IPv6UDP.
	Proto Proto
	// VLANID is the 802.1Q VLAN ID, 0 when the frame had no tag (or a
	// priority tag). Linux may strip tags on receive (VLAN offload): the
	// engine must then add VLANTagLen to FrameSize itself.
	VLANID uint16
	// SrcIP and DstIP are the IP addresses (no zone).
	SrcIP, DstIP netip.Addr
	// SrcPort and DstPort are the UDP ports.
	SrcPort, DstPort uint16
	// FrameSize is the RFC 2544 frame size in bytes: the bytes received plus
	// the 4-byte FCS (a frame handed over without FCS, as AF_PACKET does).
	FrameSize int
}

// ParseFrame reads a received frame (from the destination MAC on, without
// FCS): Ethernet II, an optional 802.1Q tag, IPv4 (options allowed, no
// fragments) or IPv6 (no extension headers), UDP, and the signature at the
// start of the UDP payload. It checks that the IP length fits the frame
// (trailing Ethernet padding is allowed) and that the UDP length equals the
// IP payload length; it does not verify checksums. Anything else returns an
// error wrapping ErrNotTestFrame and zero values. It never panics and does
// not allocate.
func ParseFrame(frame []byte) (Signature, FrameInfo, error) {
	var info FrameInfo
	if len(frame) < EthHeaderLen {
		return Signature{}, FrameInfo{}, errTruncated
	}
	etherType := binary.BigEndian.Uint16(frame[12:])
	off := EthHeaderLen
	if etherType == 0x8100 {
		if len(frame) < EthHeaderLen+VLANTagLen {
			return Signature{}, FrameInfo{}, errTruncated
		}
		info.VLANID = binary.BigEndian.Uint16(frame[14:]) & 0x0FFF
		etherType = binary.BigEndian.Uint16(frame[16:])
		off += VLANTagLen
	}
	ip := frame[off:]
	var udp []byte
	switch etherType {
	case 0x0800:
		if len(ip) < IPv4HeaderLen {
			return Signature{}, FrameInfo{}, errTruncated
		}
		if ip[0]>>4 != 4 {
			return Signature{}, FrameInfo{}, errIPVersion
		}
		ihl := int(ip[0]&0x0F) * 4
		if ihl < IPv4HeaderLen || ihl > len(ip) {
			return Signature{}, FrameInfo{}, errIPHeaderLen
		}
		total := int(binary.BigEndian.Uint16(ip[2:]))
		if total < ihl || total > len(ip) {
			return Signature{}, FrameInfo{}, errIPLength
		}
		if binary.BigEndian.Uint16(ip[6:])&0x3FFF != 0 { // MF or fragment offset
			return Signature{}, FrameInfo{}, errFragment
		}
		if ip[9] != 17 {
			return Signature{}, FrameInfo{}, errNotUDP
		}
		info.Proto = IPv4UDP
		info.SrcIP = netip.AddrFrom4([4]byte(ip[12:16]))
		info.DstIP = netip.AddrFrom4([4]byte(ip[16:20]))
		udp = ip[ihl:total]
	case 0x86DD:
		if len(ip) < IPv6HeaderLen {
			return Signature{}, FrameInfo{}, errTruncated
		}
		if ip[0]>>4 != 6 {
			return Signature{}, FrameInfo{}, errIPVersion
		}
		plen := int(binary.BigEndian.Uint16(ip[4:]))
		if IPv6HeaderLen+plen > len(ip) {
			return Signature{}, FrameInfo{}, errIPLength
		}
		if ip[6] != 17 {
			return Signature{}, FrameInfo{}, errNotUDP
		}
		info.Proto = IPv6UDP
		info.SrcIP = netip.AddrFrom16([16]byte(ip[8:24]))
		info.DstIP = netip.AddrFrom16([16]byte(ip[24:40]))
		udp = ip[IPv6HeaderLen : IPv6HeaderLen+plen]
	default:
		return Signature{}, FrameInfo{}, errEtherType
	}
	if len(udp) < UDPHeaderLen || int(binary.BigEndian.Uint16(udp[4:])) != len(udp) {
		return Signature{}, FrameInfo{}, errUDPLength
	}
	sig, err := DecodeSignature(udp[UDPHeaderLen:])
	if err != nil {
		return Signature{}, FrameInfo{}, err
	}
	info.SrcPort = binary.BigEndian.Uint16(udp[0:])
	info.DstPort = binary.BigEndian.Uint16(udp[2:])
	info.FrameSize = len(frame) + FCSLen
	return sig, info, nil
}
