package framing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Defaults of TemplateConfig, from RFC 2544 Appendix C.
const (
	// DefaultSrcPort is the UDP source port of RFC 2544 App. C (0xC020).
	DefaultSrcPort = 0xC020
	// DefaultDstPort is the UDP destination port of RFC 2544 App. C (echo).
	DefaultDstPort = 7
	// DefaultTTL is the IPv4 TTL and IPv6 hop limit of RFC 2544 App. C. It is
	// plenty for a benchmark path and keeps a stray test frame from going far
	// (RFC 6815).
	DefaultTTL = 10
)

// TemplateConfig describes the test frames of one flow. The zero value of
// every optional field is a documented default; addresses, MACs and FrameSize
// are required.
type TemplateConfig struct {
	// SrcMAC is the sending port's MAC; must be 6 bytes and unicast.
	SrcMAC net.HardwareAddr
	// DstMAC is the next hop's MAC (the DUT's input port); 6 bytes.
	DstMAC net.HardwareAddr
	// SrcIP and DstIP are the flow's addresses. Both IPv4 (IPv4/UDP frames) or
	// both IPv6 (IPv6/UDP frames); IPv4-mapped IPv6 addresses count as IPv4
	// and zones are ignored. SrcIP must be unicast and specified, DstIP
	// specified. framing does not enforce the RFC 6815 benchmark ranges; the
	// engine does.
	SrcIP, DstIP netip.Addr
	// SrcPort is the UDP source port; 0 means DefaultSrcPort (0xC020).
	SrcPort uint16
	// DstPort is the UDP destination port; 0 means DefaultDstPort (7).
	DstPort uint16
	// FrameSize is the RFC 2544 frame size in bytes, FCS included; from
	// MinFrameSize to MaxJumbo. The template holds FrameSize−4 bytes.
	FrameSize int
	// VLANID, when non-zero (1..4094), adds an 802.1Q tag with this VLAN ID
	// and priority 0. Zero means untagged.
	VLANID uint16
	// TTL is the IPv4 TTL or IPv6 hop limit; 0 means DefaultTTL (10).
	TTL uint8
	// UDPChecksum makes IPv4/UDP frames carry a correct UDP checksum; false
	// leaves it 0 ("no checksum", allowed by RFC 768 and App. C) which saves
	// no work at stamp time but matches testers that do not compute it.
	// IPv6/UDP frames always carry a correct checksum (RFC 8200 §8.1).
	UDPChecksum bool
}

// Proto is the protocol the addresses select, or 0 if they are unset or of
// different families.
func (c TemplateConfig) Proto() Proto {
	src, dst := c.SrcIP.Unmap(), c.DstIP.Unmap()
	switch {
	case src.Is4() && dst.Is4():
		return IPv4UDP
	case src.Is6() && dst.Is6():
		return IPv6UDP
	}
	return 0
}

// VLAN reports whether frames carry an 802.1Q tag.
func (c TemplateConfig) VLAN() bool { return c.VLANID != 0 }

// Validate checks c; the error names the bad field, its value and the fix.
// Frame-size errors are *FrameSizeError (see ValidateFrameSize); no path MTU
// is checked here.
func (c TemplateConfig) Validate() error {
	if len(c.SrcMAC) != 6 {
		return fmt.Errorf("src mac %q: want a 6-byte Ethernet MAC such as 02:00:00:00:00:01", c.SrcMAC.String())
	}
	if c.SrcMAC[0]&1 != 0 {
		return fmt.Errorf("src mac %v: is a multicast address; use the sending port's unicast MAC", c.SrcMAC)
	}
	if len(c.DstMAC) != 6 {
		return fmt.Errorf("dst mac %q: want a 6-byte Ethernet MAC such as the DUT port's", c.DstMAC.String())
	}
	if !c.SrcIP.IsValid() {
		return errors.New("src ip: not set; give the sending port's address, e.g. 198.18.1.2 or 2001:2::2")
	}
	if !c.DstIP.IsValid() {
		return errors.New("dst ip: not set; give the receiving port's address, e.g. 198.19.1.2 or 2001:2:0:8000::2")
	}
	src, dst := c.SrcIP.Unmap(), c.DstIP.Unmap()
	if src.Is4() != dst.Is4() {
		return fmt.Errorf("src ip %v and dst ip %v: one is IPv4 and one IPv6; use two addresses of the same family", c.SrcIP, c.DstIP)
	}
	if src.IsUnspecified() || src.IsMulticast() {
		return fmt.Errorf("src ip %v: not a unicast address; use the sending port's address", c.SrcIP)
	}
	if dst.IsUnspecified() {
		return fmt.Errorf("dst ip %v: unspecified; use the receiving port's address", c.DstIP)
	}
	if c.VLANID > 4094 {
		return fmt.Errorf("vlan id %d: must be 0 (untagged) or 1..4094", c.VLANID)
	}
	if m, ok := MixOf(c.FrameSize); ok {
		return fmt.Errorf("frame size %s: a mix, not one size; build one template per size of its pattern (Mix.Pattern)", m.Name)
	}
	if err := ValidateFrameSize(c.FrameSize, c.Proto(), c.VLAN(), 0); err != nil {
		return err
	}
	return nil
}

// withDefaults returns c with defaults filled in and addresses normalised.
func (c TemplateConfig) withDefaults() TemplateConfig {
	if c.SrcPort == 0 {
		c.SrcPort = DefaultSrcPort
	}
	if c.DstPort == 0 {
		c.DstPort = DefaultDstPort
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	c.SrcIP = c.SrcIP.Unmap().WithZone("")
	c.DstIP = c.DstIP.Unmap().WithZone("")
	c.SrcMAC = append(net.HardwareAddr(nil), c.SrcMAC...)
	c.DstMAC = append(net.HardwareAddr(nil), c.DstMAC...)
	return c
}

// Template is one flow's test frame, built once: Ethernet II [+ 802.1Q] +
// IPv4 or IPv6 + UDP, payload bytes 00 01 02 … (RFC 2544 App. C) with the
// test signature over the first SignatureLen payload bytes once stamped.
//
// Flows of one stream differ only in ports or addresses: build one Template
// per flow (each costs one frame of memory) and stamp each frame from its
// flow's template. A Template is immutable after NewTemplate and safe for
// concurrent use; Stamp and WriteFrame write only to the caller's buffer.
type Template struct {
	cfg        TemplateConfig
	proto      Proto
	frame      []byte // Len() bytes, no FCS; never written after NewTemplate
	payloadOff int    // offset of the UDP payload (signature)
	csumOff    int    // offset of the UDP checksum field
	csumOn     bool   // UDP checksum is computed (always for IPv6)
	// partial is the one's-complement sum, unfolded, of the UDP pseudo-header,
	// the UDP header with a zero checksum and the payload outside the
	// signature. Adding the signature's words gives the full sum.
	partial uint32
}

// NewTemplate validates cfg and builds the frame with gopacket layers.
func NewTemplate(cfg TemplateConfig) (*Template, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("frame template: %w", err)
	}
	cfg = cfg.withDefaults()
	t := &Template{cfg: cfg, proto: cfg.Proto()}
	vlan := cfg.VLAN()

	eth := &layers.Ethernet{SrcMAC: cfg.SrcMAC, DstMAC: cfg.DstMAC}
	ls := []gopacket.SerializableLayer{eth}
	etherType := &eth.EthernetType
	if vlan {
		eth.EthernetType = layers.EthernetTypeDot1Q
		tag := &layers.Dot1Q{VLANIdentifier: cfg.VLANID}
		ls = append(ls, tag)
		etherType = &tag.Type
	}
	udp := &layers.UDP{SrcPort: layers.UDPPort(cfg.SrcPort), DstPort: layers.UDPPort(cfg.DstPort)}
	switch t.proto {
	case IPv4UDP:
		*etherType = layers.EthernetTypeIPv4
		ip := &layers.IPv4{
			Version: 4, IHL: 5, TTL: cfg.TTL, Protocol: layers.IPProtocolUDP,
			// DF: a DUT whose egress MTU is too small drops the frame (and
			// the loss shows) instead of spending effort fragmenting it.
			Flags: layers.IPv4DontFragment,
			SrcIP: cfg.SrcIP.AsSlice(), DstIP: cfg.DstIP.AsSlice(),
		}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return nil, fmt.Errorf("frame template: %w", err)
		}
		ls = append(ls, ip)
		t.csumOn = cfg.UDPChecksum
	case IPv6UDP:
		*etherType = layers.EthernetTypeIPv6
		ip := &layers.IPv6{
			Version: 6, NextHeader: layers.IPProtocolUDP, HopLimit: cfg.TTL,
			SrcIP: cfg.SrcIP.AsSlice(), DstIP: cfg.DstIP.AsSlice(),
		}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return nil, fmt.Errorf("frame template: %w", err)
		}
		ls = append(ls, ip)
		t.csumOn = true
	}
	payload := make([]byte, UDPPayloadSize(cfg.FrameSize, t.proto, vlan))
	FillPayload(payload)
	ls = append(ls, udp, gopacket.Payload(payload))

	buf := gopacket.NewSerializeBufferExpectedSize(cfg.FrameSize, 0)
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		return nil, fmt.Errorf("frame template: serialize %v frame: %w", t.proto, err)
	}
	t.frame = append([]byte(nil), buf.Bytes()...)
	if len(t.frame) != cfg.FrameSize-FCSLen {
		return nil, fmt.Errorf("frame template: built %d bytes for frame size %d, want %d (bug)",
			len(t.frame), cfg.FrameSize, cfg.FrameSize-FCSLen)
	}

	t.payloadOff = UDPPayloadOffset(t.proto, vlan)
	udpOff := t.payloadOff - UDPHeaderLen
	t.csumOff = udpOff + 6
	gopacketCsum := binary.BigEndian.Uint16(t.frame[t.csumOff:])
	t.frame[t.csumOff], t.frame[t.csumOff+1] = 0, 0
	t.partial = pseudoHeaderSum(cfg.SrcIP, cfg.DstIP, len(t.frame)-udpOff) +
		sum16(t.frame[udpOff:t.payloadOff]) + sum16(t.frame[t.payloadOff+SignatureLen:])
	if t.csumOn {
		c := t.udpChecksum(t.frame[t.payloadOff : t.payloadOff+SignatureLen])
		// gopacket leaves a computed 0 as 0; RFC 768 sends it as 0xFFFF.
		if c != gopacketCsum && !(c == 0xFFFF && gopacketCsum == 0) {
			return nil, fmt.Errorf("frame template: udp checksum %#04x, gopacket computed %#04x (bug)", c, gopacketCsum)
		}
		binary.BigEndian.PutUint16(t.frame[t.csumOff:], c)
	}
	return t, nil
}

// Len is the frame length in bytes handed to a raw socket: FrameSize−4 (the
// NIC appends the FCS).
func (t *Template) Len() int { return len(t.frame) }

// FrameSize is the RFC 2544 frame size in bytes, FCS included.
func (t *Template) FrameSize() int { return len(t.frame) + FCSLen }

// Bytes is the template frame (Len() bytes, no FCS). It is a read-only view:
// copy it (CopyTo) before stamping; never write to it. Its signature area
// holds the payload pattern, not a signature.
func (t *Template) Bytes() []byte { return t.frame[:len(t.frame):len(t.frame)] }

// PayloadOffset is the offset in bytes of the UDP payload, where the test
// signature starts (see UDPPayloadOffset).
func (t *Template) PayloadOffset() int { return t.payloadOff }

// Proto is the template's protocol.
func (t *Template) Proto() Proto { return t.proto }

// Config is the template's configuration with defaults filled in.
func (t *Template) Config() TemplateConfig {
	c := t.cfg
	c.SrcMAC = append(net.HardwareAddr(nil), c.SrcMAC...)
	c.DstMAC = append(net.HardwareAddr(nil), c.DstMAC...)
	return c
}

// CopyTo copies the template frame into dst and returns Len(). It panics if
// dst is shorter than Len().
func (t *Template) CopyTo(dst []byte) int {
	_ = dst[len(t.frame)-1]
	return copy(dst, t.frame)
}

// udpChecksum is the UDP checksum field for a frame whose signature area
// holds sig (SignatureLen bytes), mapped per RFC 768 (0 is sent as 0xFFFF).
func (t *Template) udpChecksum(sig []byte) uint16 {
	c := ^fold(t.partial + sum16(sig))
	if c == 0 {
		c = 0xFFFF
	}
	return c
}

// FillPayload writes the RFC 2544 App. C payload pattern into p: byte i is
// i mod 256 (00 01 02 … FF 00 01 …), counted from the first UDP payload byte.
// A UDP-socket transport fills its datagram with FillPayload, then writes
// the signature over the first SignatureLen bytes with EncodeSignature.
func FillPayload(p []byte) {
	for i := range p {
		p[i] = byte(i)
	}
}

// sum16 is the one's-complement sum (unfolded) of b as big-endian 16-bit
// words, an odd last byte padded with zero (RFC 1071).
func sum16(b []byte) uint32 {
	var s uint64
	for len(b) >= 8 {
		s += uint64(binary.BigEndian.Uint16(b)) + uint64(binary.BigEndian.Uint16(b[2:])) +
			uint64(binary.BigEndian.Uint16(b[4:])) + uint64(binary.BigEndian.Uint16(b[6:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	for s>>32 != 0 {
		s = s&0xFFFFFFFF + s>>32
	}
	return foldCarry(uint32(s))
}

// foldCarry reduces s so that adding a few more 16-bit sums cannot overflow.
func foldCarry(s uint32) uint32 {
	for s > 0xFFFF {
		s = s&0xFFFF + s>>16
	}
	return s
}

// fold folds a 32-bit one's-complement sum to 16 bits.
func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return uint16(s)
}

// pseudoHeaderSum is the sum of the UDP pseudo-header (RFC 768, RFC 8200 §8.1).
func pseudoHeaderSum(src, dst netip.Addr, udpLen int) uint32 {
	var s uint32
	if src.Is4() {
		a, b := src.As4(), dst.As4()
		s = sum16(a[:]) + sum16(b[:])
	} else {
		a, b := src.As16(), dst.As16()
		s = sum16(a[:]) + sum16(b[:])
	}
	s += uint32(layers.IPProtocolUDP) + uint32(udpLen>>16) + uint32(udpLen&0xFFFF)
	return foldCarry(s)
}
