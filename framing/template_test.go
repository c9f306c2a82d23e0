package framing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

var (
	macA = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0x02}
	macB = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}

	cmpAddr = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })
)

// family is one frame format exercised by the round-trip tests.
type family struct {
	name     string
	src, dst netip.Addr
	vlan     uint16
	checksum bool
}

var families = []family{
	{name: "IPv4", src: netip.MustParseAddr("198.18.1.2"), dst: netip.MustParseAddr("198.19.1.2")},
	{name: "IPv4 with UDP checksum", src: netip.MustParseAddr("198.18.1.2"), dst: netip.MustParseAddr("198.19.1.2"), checksum: true},
	{name: "IPv4 VLAN 100", src: netip.MustParseAddr("198.18.1.2"), dst: netip.MustParseAddr("198.19.1.2"), vlan: 100},
	{name: "IPv4 VLAN 4094 with UDP checksum", src: netip.MustParseAddr("198.18.1.2"), dst: netip.MustParseAddr("198.19.1.2"), vlan: 4094, checksum: true},
	{name: "IPv6", src: netip.MustParseAddr("2001:2::2"), dst: netip.MustParseAddr("2001:2:0:8000::2")},
	{name: "IPv6 VLAN 7", src: netip.MustParseAddr("2001:2::2"), dst: netip.MustParseAddr("2001:2:0:8000::2"), vlan: 7},
}

func (f family) config(size int) TemplateConfig {
	return TemplateConfig{
		SrcMAC: macA, DstMAC: macB, SrcIP: f.src, DstIP: f.dst,
		FrameSize: size, VLANID: f.vlan, UDPChecksum: f.checksum,
	}
}

func (f family) proto() Proto {
	if f.src.Is4() {
		return IPv4UDP
	}
	return IPv6UDP
}

// refSum is a plain RFC 1071 one's-complement sum, written independently of
// the package's sum16.
func refSum(b []byte, initial uint32) uint16 {
	s := initial
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		s += w
		s = (s & 0xFFFF) + (s >> 16)
	}
	return uint16(s)
}

// checkFrame decodes frame with gopacket and checks every header field, the
// IPv4 header checksum and the UDP checksum (computed here from the decoded
// fields), the payload pattern and the signature.
func checkFrame(t *testing.T, f family, size int, frame []byte, sig Signature) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("in %s frame size %d with %+v: % x", f.name, size, sig, frame)
		}
	}()
	if len(frame) != size-4 {
		t.Fatalf("frame is %d bytes, want %d", len(frame), size-4)
	}
	pkt := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatalf("gopacket: %v", el.Error())
	}
	if pkt.Metadata().Truncated {
		t.Fatalf("gopacket: truncated")
	}
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	if !bytes.Equal(eth.SrcMAC, macA) || !bytes.Equal(eth.DstMAC, macB) {
		t.Errorf("macs %v -> %v", eth.SrcMAC, eth.DstMAC)
	}
	if f.vlan != 0 {
		tag, ok := pkt.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q)
		if !ok || tag.VLANIdentifier != f.vlan || eth.EthernetType != layers.EthernetTypeDot1Q {
			t.Fatalf("802.1Q tag %+v, want VLAN %d", tag, f.vlan)
		}
	} else if pkt.Layer(layers.LayerTypeDot1Q) != nil {
		t.Fatalf("unexpected 802.1Q tag")
	}
	vlan := f.vlan != 0
	udp, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if !ok {
		t.Fatalf("no UDP layer: %v", pkt)
	}
	var pseudo uint32
	udpLen := len(udp.Contents) + len(udp.Payload)
	if f.src.Is4() {
		ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if int(ip.Length) != size-18-boolInt(vlan)*4 || ip.TTL != DefaultTTL || ip.Flags != layers.IPv4DontFragment || ip.IHL != 5 {
			t.Errorf("ipv4 length %d ttl %d flags %v ihl %d", ip.Length, ip.TTL, ip.Flags, ip.IHL)
		}
		if !ip.SrcIP.Equal(f.src.AsSlice()) || !ip.DstIP.Equal(f.dst.AsSlice()) {
			t.Errorf("ipv4 %v -> %v", ip.SrcIP, ip.DstIP)
		}
		if refSum(ip.Contents, 0) != 0xFFFF {
			t.Errorf("ipv4 header checksum %#04x does not verify", ip.Checksum)
		}
		pseudo = uint32(refSum(ip.SrcIP.To4(), 0)) + uint32(refSum(ip.DstIP.To4(), 0)) + 17 + uint32(udpLen)
	} else {
		ip := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
		if int(ip.Length) != size-58-boolInt(vlan)*4 || ip.HopLimit != DefaultTTL || ip.NextHeader != layers.IPProtocolUDP {
			t.Errorf("ipv6 payload length %d hop limit %d next %v", ip.Length, ip.HopLimit, ip.NextHeader)
		}
		if !ip.SrcIP.Equal(f.src.AsSlice()) || !ip.DstIP.Equal(f.dst.AsSlice()) {
			t.Errorf("ipv6 %v -> %v", ip.SrcIP, ip.DstIP)
		}
		pseudo = uint32(refSum(ip.SrcIP, 0)) + uint32(refSum(ip.DstIP, 0)) + 17 + uint32(udpLen)
	}
	if udp.SrcPort != DefaultSrcPort || udp.DstPort != DefaultDstPort {
		t.Errorf("udp ports %d -> %d", udp.SrcPort, udp.DstPort)
	}
	if int(udp.Length) != udpLen || udpLen != size-HeaderOverhead(f.proto(), vlan)+UDPHeaderLen {
		t.Errorf("udp length %d, segment %d", udp.Length, udpLen)
	}
	if f.src.Is4() && !f.checksum {
		if udp.Checksum != 0 {
			t.Errorf("udp checksum %#04x, want 0 (disabled)", udp.Checksum)
		}
	} else {
		seg := append(append([]byte(nil), udp.Contents...), udp.Payload...)
		if udp.Checksum == 0 || refSum(seg, pseudo&0xFFFF+pseudo>>16) != 0xFFFF {
			t.Errorf("udp checksum %#04x does not verify", udp.Checksum)
		}
	}
	payload := udp.Payload
	if len(payload) != UDPPayloadSize(size, f.proto(), vlan) {
		t.Fatalf("payload %d bytes, want %d", len(payload), UDPPayloadSize(size, f.proto(), vlan))
	}
	for i := SignatureLen; i < len(payload); i++ {
		if payload[i] != byte(i) {
			t.Fatalf("payload[%d] = %#02x, want %#02x", i, payload[i], byte(i))
		}
	}
	got, err := DecodeSignature(payload)
	if err != nil {
		t.Fatalf("DecodeSignature: %v", err)
	}
	sig.Seq &= MaxSeq
	if got != sig {
		t.Errorf("signature %+v, want %+v", got, sig)
	}
	psig, info, err := ParseFrame(frame)
	if err != nil {
		t.Fatalf("ParseFrame: %v", err)
	}
	wantInfo := FrameInfo{Proto: f.proto(), VLANID: f.vlan, SrcIP: f.src, DstIP: f.dst,
		SrcPort: DefaultSrcPort, DstPort: DefaultDstPort, FrameSize: size}
	if diff := cmp.Diff(wantInfo, info, cmpAddr); diff != "" || psig != sig {
		t.Errorf("ParseFrame signature %+v (want %+v), info (-want +got):\n%s", psig, sig, diff)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTemplateEverySize builds, stamps and decodes every frame size from
// the minimum to MaxJumbo for every format.
func TestTemplateEverySize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			min := MinFrameSize(f.proto(), f.vlan != 0)
			buf := make([]byte, MaxJumbo)
			for size := min; size <= MaxJumbo; size++ {
				tpl, err := NewTemplate(f.config(size))
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				if tpl.Len() != size-4 || tpl.FrameSize() != size || tpl.Proto() != f.proto() ||
					tpl.PayloadOffset() != UDPPayloadOffset(f.proto(), f.vlan != 0) {
					t.Fatalf("size %d: Len %d FrameSize %d Proto %v PayloadOffset %d", size,
						tpl.Len(), tpl.FrameSize(), tpl.Proto(), tpl.PayloadOffset())
				}
				sig := Signature{RunID: uint8(rng.Uint32()), StreamID: uint16(rng.Uint32()),
					Seq: rng.Uint64() & MaxSeq, TxNs: int64(rng.Uint64())}
				n := tpl.WriteFrame(buf, sig)
				checkFrame(t, f, size, buf[:n], sig)
				if t.Failed() {
					t.FailNow()
				}
			}
		})
	}
}

// TestStampManySignatures restamps one buffer with many signatures,
// including extremes and one chosen so the checksum sums to zero, and
// checks every frame.
func TestStampManySignatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, f := range families {
		for _, size := range []int{MinFrameSize(f.proto(), f.vlan != 0), 101, 1518, 9215} {
			tpl, err := NewTemplate(f.config(size))
			if err != nil {
				t.Fatal(err)
			}
			frame := make([]byte, tpl.Len())
			tpl.CopyTo(frame)
			sigs := []Signature{
				{},
				{RunID: 0xFF, StreamID: 0xFFFF, Seq: MaxSeq, TxNs: -1},
				{RunID: 1, StreamID: 1, Seq: 1 << 47, TxNs: 1<<63 - 1},
				{TxNs: -1 << 63},
				{Seq: MaxSeq + 1}, // wraps to 0 on the wire
			}
			for range 2000 {
				sigs = append(sigs, Signature{RunID: uint8(rng.Uint32()), StreamID: uint16(rng.Uint32()),
					Seq: rng.Uint64(), TxNs: int64(rng.Uint64())})
			}
			for _, sig := range sigs {
				tpl.Stamp(frame, sig)
				checkFrame(t, f, size, frame, sig)
				if t.Failed() {
					t.Fatalf("%s size %d sig %+v", f.name, size, sig)
				}
			}
			if !tpl.csumOn {
				continue
			}
			// Pick the stream id that makes the checksummed sum 0xFFFF, so
			// the computed checksum is 0 and must go out as 0xFFFF.
			base := Signature{RunID: 9}
			tpl.Stamp(frame, base)
			x := ^binary.BigEndian.Uint16(frame[tpl.csumOff:]) // sum of everything else
			base.StreamID = ^x
			tpl.Stamp(frame, base)
			if c := binary.BigEndian.Uint16(frame[tpl.csumOff:]); c != 0xFFFF {
				t.Errorf("%s size %d: zero checksum sent as %#04x, want 0xffff", f.name, size, c)
			}
			checkFrame(t, f, size, frame, base)
		}
	}
}

// TestTemplateMatchesGopacket compares a stamped frame byte for byte with
// the same frame serialized by gopacket from scratch.
func TestTemplateMatchesGopacket(t *testing.T) {
	for _, f := range families {
		for _, size := range []int{MinFrameSize(f.proto(), f.vlan != 0), 1000, 1518} {
			tpl, err := NewTemplate(f.config(size))
			if err != nil {
				t.Fatal(err)
			}
			sig := Signature{RunID: 3, StreamID: 2, Seq: 123456789, TxNs: 1700000000123456789}
			got := make([]byte, tpl.Len())
			tpl.WriteFrame(got, sig)

			payload := make([]byte, UDPPayloadSize(size, f.proto(), f.vlan != 0))
			FillPayload(payload)
			EncodeSignature(payload, sig)
			eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB}
			ls := []gopacket.SerializableLayer{eth}
			next := &eth.EthernetType
			if f.vlan != 0 {
				eth.EthernetType = layers.EthernetTypeDot1Q
				tag := &layers.Dot1Q{VLANIdentifier: f.vlan}
				ls, next = append(ls, tag), &tag.Type
			}
			udp := &layers.UDP{SrcPort: 0xC020, DstPort: 7}
			if f.src.Is4() {
				*next = layers.EthernetTypeIPv4
				ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 10, Flags: layers.IPv4DontFragment,
					Protocol: layers.IPProtocolUDP, SrcIP: f.src.AsSlice(), DstIP: f.dst.AsSlice()}
				udp.SetNetworkLayerForChecksum(ip)
				ls = append(ls, ip)
			} else {
				*next = layers.EthernetTypeIPv6
				ip := &layers.IPv6{Version: 6, HopLimit: 10, NextHeader: layers.IPProtocolUDP,
					SrcIP: f.src.AsSlice(), DstIP: f.dst.AsSlice()}
				udp.SetNetworkLayerForChecksum(ip)
				ls = append(ls, ip)
			}
			ls = append(ls, udp, gopacket.Payload(payload))
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
				t.Fatal(err)
			}
			want := buf.Bytes()
			if f.src.Is4() && !f.checksum {
				off := tpl.PayloadOffset() - 2
				want[off], want[off+1] = 0, 0
			}
			if !bytes.Equal(want, got) {
				t.Errorf("%s size %d:\nwant %x\ngot  %x", f.name, size, want, got)
			}
		}
	}
}

func TestTemplateConfigValidate(t *testing.T) {
	v4a, v4b := netip.MustParseAddr("198.18.1.2"), netip.MustParseAddr("198.19.1.2")
	v6 := netip.MustParseAddr("2001:2::2")
	ok := TemplateConfig{SrcMAC: macA, DstMAC: macB, SrcIP: v4a, DstIP: v4b, FrameSize: 64}
	tests := []struct {
		name    string
		mod     func(c *TemplateConfig)
		wantMsg string // "" = valid
		wantIs  error
	}{
		{name: "valid", mod: func(c *TemplateConfig) {}},
		{name: "valid mapped IPv4", mod: func(c *TemplateConfig) { c.SrcIP = netip.MustParseAddr("::ffff:198.18.1.2") }},
		{name: "valid broadcast dst MAC", mod: func(c *TemplateConfig) { c.DstMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} }},
		{name: "short src MAC", mod: func(c *TemplateConfig) { c.SrcMAC = macA[:5] }, wantMsg: "src mac"},
		{name: "nil dst MAC", mod: func(c *TemplateConfig) { c.DstMAC = nil }, wantMsg: "dst mac"},
		{name: "multicast src MAC", mod: func(c *TemplateConfig) { c.SrcMAC = net.HardwareAddr{1, 0, 0x5e, 0, 0, 1} }, wantMsg: "src mac 01:00:5e:00:00:01: is a multicast"},
		{name: "no src IP", mod: func(c *TemplateConfig) { c.SrcIP = netip.Addr{} }, wantMsg: "src ip: not set"},
		{name: "no dst IP", mod: func(c *TemplateConfig) { c.DstIP = netip.Addr{} }, wantMsg: "dst ip: not set"},
		{name: "mixed families", mod: func(c *TemplateConfig) { c.DstIP = v6 }, wantMsg: "one is IPv4 and one IPv6"},
		{name: "unspecified src", mod: func(c *TemplateConfig) { c.SrcIP = netip.IPv4Unspecified() }, wantMsg: "src ip 0.0.0.0: not a unicast"},
		{name: "multicast src", mod: func(c *TemplateConfig) { c.SrcIP = netip.MustParseAddr("224.0.0.1") }, wantMsg: "src ip 224.0.0.1"},
		{name: "unspecified dst", mod: func(c *TemplateConfig) { c.DstIP = netip.IPv4Unspecified() }, wantMsg: "dst ip 0.0.0.0"},
		{name: "vlan 4095", mod: func(c *TemplateConfig) { c.VLANID = 4095 }, wantMsg: "vlan id 4095"},
		{name: "zero frame size", mod: func(c *TemplateConfig) { c.FrameSize = 0 }, wantMsg: "frame size 0", wantIs: ErrFrameTooSmall},
		{name: "vlan needs 68", mod: func(c *TemplateConfig) { c.VLANID = 1 }, wantMsg: "at least 68", wantIs: ErrFrameTooSmall},
		{name: "IPv6 needs 84", mod: func(c *TemplateConfig) { c.SrcIP, c.DstIP = v6, v6 }, wantMsg: "at least 84", wantIs: ErrFrameTooSmall},
		{name: "too large", mod: func(c *TemplateConfig) { c.FrameSize = 9300 }, wantMsg: "frame size 9300", wantIs: ErrFrameTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mod(&c)
			err := c.Validate()
			_, nerr := NewTemplate(c)
			if tt.wantMsg == "" {
				if err != nil || nerr != nil {
					t.Fatalf("Validate = %v, NewTemplate = %v; want nil", err, nerr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.wantMsg)
			}
			if nerr == nil || !strings.Contains(nerr.Error(), tt.wantMsg) {
				t.Fatalf("NewTemplate error = %v, want one containing %q", nerr, tt.wantMsg)
			}
			if tt.wantIs != nil && (!errors.Is(err, tt.wantIs) || !errors.Is(nerr, tt.wantIs)) {
				t.Errorf("errors.Is(%v, %v) = false", nerr, tt.wantIs)
			}
		})
	}
}

func TestTemplateDefaultsAndOverrides(t *testing.T) {
	cfg := TemplateConfig{SrcMAC: macA, DstMAC: macB,
		SrcIP: netip.MustParseAddr("::ffff:198.18.1.2"), DstIP: netip.MustParseAddr("198.19.1.2"), FrameSize: 64}
	tpl, err := NewTemplate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := cfg
	want.SrcIP = netip.MustParseAddr("198.18.1.2")
	want.SrcPort, want.DstPort, want.TTL = 0xC020, 7, 10
	if diff := cmp.Diff(want, tpl.Config(), cmpAddr); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}
	// The template does not alias the caller's MAC slices.
	cfg.SrcMAC[0] = 0xAA
	if tpl.Bytes()[6] != 0x02 {
		t.Errorf("template changed with the caller's MAC")
	}
	cfg.SrcMAC[0] = 0x02

	cfg.SrcPort, cfg.DstPort, cfg.TTL = 1024, 2048, 64
	tpl, err = NewTemplate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, tpl.Len())
	tpl.WriteFrame(frame, Signature{Seq: 5})
	_, info, err := ParseFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	if info.SrcPort != 1024 || info.DstPort != 2048 || frame[14+8] != 64 {
		t.Errorf("ports %d->%d ttl %d, want 1024->2048 ttl 64", info.SrcPort, info.DstPort, frame[22])
	}
	// Bytes is a capacity-limited view: appending cannot write into the template.
	b := tpl.Bytes()
	if cap(b) != len(b) || len(b) != tpl.Len() {
		t.Errorf("Bytes len %d cap %d", len(b), cap(b))
	}
}

func TestFillPayload(t *testing.T) {
	p := make([]byte, 300)
	FillPayload(p)
	if p[0] != 0 || p[1] != 1 || p[255] != 0xFF || p[256] != 0 || p[299] != 43 {
		t.Errorf("pattern % x", p)
	}
}

func TestBufferTooShortPanics(t *testing.T) {
	tpl, err := NewTemplate(families[0].config(64))
	if err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]func(){
		"Stamp":           func() { tpl.Stamp(make([]byte, 59), Signature{}) },
		"WriteFrame":      func() { tpl.WriteFrame(make([]byte, 59), Signature{}) },
		"CopyTo":          func() { tpl.CopyTo(nil) },
		"EncodeSignature": func() { EncodeSignature(make([]byte, 17), Signature{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short buffer did not panic", name)
				}
			}()
			fn()
		}()
	}
}
