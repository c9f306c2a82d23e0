package trials

import (
	"encoding/binary"
	"net/netip"
)

// IPv6 neighbor discovery (RFC 4861): the learning protocol of IPv6 trials,
// beside ARP. Only what the engine needs: neighbor solicitations for the
// DUT's address, advertisements in reply to the DUT's solicitations.
const (
	ipProtoICMPv6 = 58
	ndSolicit     = 135
	ndAdvert      = 136
	ndFrameLen    = 14 + 40 + 24 + 8 // Ethernet, IPv6, NS/NA, one link-layer option
	ndOptSrcLL    = 1
	ndOptTgtLL    = 2
)

// ndPacket is the part of an NS or NA the engine uses.
type ndPacket struct {
	Type   uint8
	EthSrc [6]byte
	Src    netip.Addr // IPv6 source
	Target netip.Addr
	// LL is the source (NS) or target (NA) link-layer address option;
	// HasLL says whether it was present.
	LL    [6]byte
	HasLL bool
}

// solicitedNode is the solicited-node multicast address of a.
func solicitedNode(a netip.Addr) netip.Addr {
	b := a.As16()
	m := [16]byte{0xff, 0x02, 10: 0, 11: 0x01, 12: 0xff}
	copy(m[13:], b[13:])
	return netip.AddrFrom16(m)
}

// multicastMAC is the Ethernet address of IPv6 multicast group g.
func multicastMAC(g netip.Addr) [6]byte {
	b := g.As16()
	return [6]byte{0x33, 0x33, b[12], b[13], b[14], b[15]}
}

// putND writes an NS (typ ndSolicit) or NA (ndAdvert) frame into b (at least
// ndFrameLen bytes) and returns its length. An NS goes to the target's
// solicited-node group and carries the source link-layer option; an NA goes
// to dst/dstMAC, has the Solicited and Override flags and carries the target
// link-layer option.
func putND(b []byte, typ uint8, srcMAC [6]byte, src, target, dst netip.Addr, dstMAC [6]byte) int {
	_ = b[ndFrameLen-1]
	opt := uint8(ndOptTgtLL)
	if typ == ndSolicit {
		dst = solicitedNode(target)
		dstMAC = multicastMAC(dst)
		opt = ndOptSrcLL
	}
	copy(b[0:6], dstMAC[:])
	copy(b[6:12], srcMAC[:])
	binary.BigEndian.PutUint16(b[12:14], etherTypeIPv6)
	ip := b[14:54]
	binary.BigEndian.PutUint32(ip[0:4], 6<<28)
	binary.BigEndian.PutUint16(ip[4:6], 32) // payload: 24 + 8
	ip[6], ip[7] = ipProtoICMPv6, 255
	s16, d16 := src.As16(), dst.As16()
	copy(ip[8:24], s16[:])
	copy(ip[24:40], d16[:])
	m := b[54:ndFrameLen]
	clear(m)
	m[0] = typ
	if typ == ndAdvert {
		m[4] = 0x60 // Solicited, Override
	}
	t16 := target.As16()
	copy(m[8:24], t16[:])
	m[24], m[25] = opt, 1
	copy(m[26:32], srcMAC[:])
	binary.BigEndian.PutUint16(m[2:4], icmpv6Checksum(src, dst, m))
	return ndFrameLen
}

// icmpv6Checksum is the ICMPv6 checksum of msg (checksum field zero) with the
// IPv6 pseudo-header (RFC 8200 §8.1).
func icmpv6Checksum(src, dst netip.Addr, msg []byte) uint16 {
	var sum uint32
	add := func(p []byte) {
		for i := 0; i+1 < len(p); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(p[i:]))
		}
		if len(p)%2 == 1 {
			sum += uint32(p[len(p)-1]) << 8
		}
	}
	s, d := src.As16(), dst.As16()
	add(s[:])
	add(d[:])
	sum += uint32(len(msg)) + ipProtoICMPv6
	add(msg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// parseND decodes an Ethernet IPv6 NS or NA (hop limit 255, valid checksum);
// ok is false for anything else.
func parseND(f []byte) (p ndPacket, ok bool) {
	if len(f) < 14+40+24 || binary.BigEndian.Uint16(f[12:14]) != etherTypeIPv6 {
		return p, false
	}
	ip := f[14:]
	if ip[0]>>4 != 6 || ip[6] != ipProtoICMPv6 || ip[7] != 255 {
		return p, false
	}
	plen := int(binary.BigEndian.Uint16(ip[4:6]))
	if plen < 24 || 40+plen > len(ip) {
		return p, false
	}
	m := ip[40 : 40+plen]
	if (m[0] != ndSolicit && m[0] != ndAdvert) || m[1] != 0 {
		return p, false
	}
	p.Src = netip.AddrFrom16([16]byte(ip[8:24]))
	dst := netip.AddrFrom16([16]byte(ip[24:40]))
	if icmpv6Checksum(p.Src, dst, zeroedChecksum(m)) != binary.BigEndian.Uint16(m[2:4]) {
		return p, false
	}
	p.Type = m[0]
	copy(p.EthSrc[:], f[6:12])
	p.Target = netip.AddrFrom16([16]byte(m[8:24]))
	for o := m[24:]; len(o) >= 8; {
		n := int(o[1]) * 8
		if n == 0 || n > len(o) {
			return p, false
		}
		if (o[0] == ndOptSrcLL && p.Type == ndSolicit) || (o[0] == ndOptTgtLL && p.Type == ndAdvert) {
			copy(p.LL[:], o[2:8])
			p.HasLL = true
		}
		o = o[n:]
	}
	return p, true
}

// zeroedChecksum returns msg with its checksum field zeroed, in a copy held
// on the stack for the small messages NDP uses.
func zeroedChecksum(m []byte) []byte {
	var buf [256]byte
	if len(m) > len(buf) {
		c := append([]byte(nil), m...)
		c[2], c[3] = 0, 0
		return c
	}
	n := copy(buf[:], m)
	buf[2], buf[3] = 0, 0
	return buf[:n]
}
