package trials

import (
	"encoding/binary"
	"net/netip"
)

// ARP (RFC 826) over Ethernet for IPv4, the learning protocol of the raw
// transport. Neighbor discovery for IPv6 will sit beside it.
const (
	etherTypeARP  = 0x0806
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
	etherTypeVLAN = 0x8100
	arpRequest    = 1
	arpReply      = 2
	arpFrameLen   = 60 // 42 bytes padded to the Ethernet minimum (FCS excluded)
)

var broadcastMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// arpPacket is the part of an ARP packet the engine uses.
type arpPacket struct {
	Op       uint16
	SenderHW [6]byte
	SenderIP netip.Addr
	TargetHW [6]byte
	TargetIP netip.Addr
}

// appendARP writes an Ethernet frame carrying p to b (which must hold
// arpFrameLen bytes) and returns the frame length.
func putARP(b []byte, dst, src [6]byte, p arpPacket) int {
	_ = b[arpFrameLen-1]
	copy(b[0:6], dst[:])
	copy(b[6:12], src[:])
	binary.BigEndian.PutUint16(b[12:14], etherTypeARP)
	binary.BigEndian.PutUint16(b[14:16], 1) // Ethernet
	binary.BigEndian.PutUint16(b[16:18], etherTypeIPv4)
	b[18], b[19] = 6, 4
	binary.BigEndian.PutUint16(b[20:22], p.Op)
	copy(b[22:28], p.SenderHW[:])
	s4 := p.SenderIP.As4()
	copy(b[28:32], s4[:])
	copy(b[32:38], p.TargetHW[:])
	t4 := p.TargetIP.As4()
	copy(b[38:42], t4[:])
	clear(b[42:arpFrameLen])
	return arpFrameLen
}

// parseARP decodes an Ethernet ARP frame for IPv4 over Ethernet; ok is false
// for anything else.
func parseARP(f []byte) (p arpPacket, ok bool) {
	if len(f) < 42 || binary.BigEndian.Uint16(f[12:14]) != etherTypeARP {
		return p, false
	}
	if binary.BigEndian.Uint16(f[14:16]) != 1 || binary.BigEndian.Uint16(f[16:18]) != etherTypeIPv4 ||
		f[18] != 6 || f[19] != 4 {
		return p, false
	}
	p.Op = binary.BigEndian.Uint16(f[20:22])
	copy(p.SenderHW[:], f[22:28])
	p.SenderIP = netip.AddrFrom4([4]byte(f[28:32]))
	copy(p.TargetHW[:], f[32:38])
	p.TargetIP = netip.AddrFrom4([4]byte(f[38:42]))
	return p, p.Op == arpRequest || p.Op == arpReply
}
