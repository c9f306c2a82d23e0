package framing

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// FuzzDecodeSignature: no input panics; whatever decodes re-encodes to the
// same 18 bytes; a payload starts with the marker and is long enough exactly
// when it decodes.
func FuzzDecodeSignature(f *testing.F) {
	for _, sig := range []Signature{{}, {RunID: 1, StreamID: 2, Seq: 3, TxNs: 4}, {RunID: 255, StreamID: 65535, Seq: MaxSeq, TxNs: -1}} {
		b := make([]byte, SignatureLen+4)
		EncodeSignature(b, sig)
		f.Add(b)
	}
	f.Add([]byte{SignatureMarker})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := DecodeSignature(data)
		wantOK := len(data) >= SignatureLen && data[0] == SignatureMarker
		if (err == nil) != wantOK {
			t.Fatalf("DecodeSignature(% x) error = %v, want ok=%v", data, err, wantOK)
		}
		if err != nil {
			if !errors.Is(err, ErrNotTestFrame) || sig != (Signature{}) {
				t.Fatalf("error %v with %+v", err, sig)
			}
			return
		}
		if sig.Seq > MaxSeq {
			t.Fatalf("seq %d above 48 bits", sig.Seq)
		}
		got := make([]byte, SignatureLen)
		EncodeSignature(got, sig)
		if !bytes.Equal(got, data[:SignatureLen]) {
			t.Fatalf("re-encoded % x, want % x", got, data[:SignatureLen])
		}
	})
}

// FuzzParseFrame: no input panics; a frame ParseFrame accepts is read the
// same way by gopacket (addresses, ports, VLAN, signature), and re-encoding
// its signature gives the bytes at the payload offset.
func FuzzParseFrame(f *testing.F) {
	for _, fam := range families {
		for _, size := range []int{MinFrameSize(fam.proto(), fam.vlan != 0), 333} {
			tpl, err := NewTemplate(fam.config(size))
			if err != nil {
				f.Fatal(err)
			}
			b := make([]byte, tpl.Len())
			tpl.WriteFrame(b, Signature{RunID: 7, StreamID: 1, Seq: 42, TxNs: 1e9})
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		sig, info, err := ParseFrame(frame)
		if err != nil {
			if !errors.Is(err, ErrNotTestFrame) || sig != (Signature{}) || info != (FrameInfo{}) {
				t.Fatalf("error %v with %+v %+v", err, sig, info)
			}
			return
		}
		if info.FrameSize != len(frame)+FCSLen {
			t.Fatalf("frame size %d for %d bytes", info.FrameSize, len(frame))
		}
		// ParseFrame skips IPv4 options without reading them; gopacket
		// rejects malformed ones. Compare on a copy whose options are
		// End-of-Options bytes.
		check := frame
		if ipOff := UDPPayloadOffset(info.Proto, frame[12] == 0x81) - UDPHeaderLen - IPv4HeaderLen; info.Proto == IPv4UDP && frame[ipOff]&0x0F > 5 {
			check = append([]byte(nil), frame...)
			clear(check[ipOff+IPv4HeaderLen : ipOff+int(frame[ipOff]&0x0F)*4])
		}
		pkt := gopacket.NewPacket(check, layers.LayerTypeEthernet, gopacket.DecodeOptions{NoCopy: true})
		udp, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if !ok {
			t.Fatalf("ParseFrame accepted % x, gopacket finds no UDP: %v", frame, pkt)
		}
		if uint16(udp.SrcPort) != info.SrcPort || uint16(udp.DstPort) != info.DstPort {
			t.Fatalf("ports %d->%d, gopacket %d->%d", info.SrcPort, info.DstPort, udp.SrcPort, udp.DstPort)
		}
		var src, dst netip.Addr
		switch ip := pkt.NetworkLayer().(type) {
		case *layers.IPv4:
			src, _ = netip.AddrFromSlice(ip.SrcIP)
			dst, _ = netip.AddrFromSlice(ip.DstIP)
			if info.Proto != IPv4UDP {
				t.Fatalf("proto %v, gopacket IPv4", info.Proto)
			}
		case *layers.IPv6:
			src, _ = netip.AddrFromSlice(ip.SrcIP)
			dst, _ = netip.AddrFromSlice(ip.DstIP)
			if info.Proto != IPv6UDP {
				t.Fatalf("proto %v, gopacket IPv6", info.Proto)
			}
		default:
			t.Fatalf("gopacket network layer %T", ip)
		}
		if src.Unmap() != info.SrcIP.Unmap() || dst.Unmap() != info.DstIP.Unmap() {
			t.Fatalf("addresses %v->%v, gopacket %v->%v", info.SrcIP, info.DstIP, src, dst)
		}
		if tag, ok := pkt.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); ok != (frame[12] == 0x81 && frame[13] == 0) || (ok && tag.VLANIdentifier != info.VLANID) {
			t.Fatalf("vlan %d, gopacket %+v", info.VLANID, tag)
		}
		gsig, err := DecodeSignature(udp.Payload)
		if err != nil || gsig != sig {
			t.Fatalf("signature %+v, from gopacket's payload %+v (%v)", sig, gsig, err)
		}
		enc := make([]byte, SignatureLen)
		EncodeSignature(enc, sig)
		if !bytes.Equal(enc, udp.Payload[:SignatureLen]) {
			t.Fatalf("re-encoded signature % x, frame has % x", enc, udp.Payload[:SignatureLen])
		}
	})
}

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the seed corpora in testdata/fuzz")

// TestWriteFuzzCorpus writes the seed corpora of FuzzDecodeSignature and
// FuzzParseFrame into testdata/fuzz when run with -args -write-corpus; otherwise
// it checks that the checked-in corpus holds every seed.
func TestWriteFuzzCorpus(t *testing.T) {
	sig := Signature{RunID: 0x2A, StreamID: 3, Seq: 0xA1B2C3D4E5F6, TxNs: 1700000000123456789}
	sigs := map[string][]byte{"short": {SignatureMarker, 1, 2}, "pattern": make([]byte, 32)}
	FillPayload(sigs["pattern"])
	for i, s := range []Signature{sig, {}, {RunID: 255, StreamID: 65535, Seq: MaxSeq, TxNs: -1}} {
		b := make([]byte, SignatureLen+i) // 18, 19 and 20 bytes
		EncodeSignature(b, s)
		sigs[fmt.Sprintf("valid-%d", i)] = b
	}
	wrong := append([]byte(nil), sigs["valid-0"]...)
	wrong[0] = 0xC4
	sigs["wrong-marker"] = wrong

	frames := map[string][]byte{}
	for _, fam := range families {
		frames[fam.name+" min"] = stamped(t, fam, MinFrameSize(fam.proto(), fam.vlan != 0), sig)
	}
	v4 := frames[families[0].name+" min"]
	v6 := frames[families[4].name+" min"]
	cp := func(b []byte) []byte { return append([]byte(nil), b...) }
	frames["ipv4 padded"] = append(cp(v4), 0, 0, 0, 0)
	opts := append(append(cp(v4[:34]), 1, 1, 1, 0), v4[34:]...)
	opts[14] = 0x46
	binary.BigEndian.PutUint16(opts[16:], binary.BigEndian.Uint16(opts[16:])+4)
	frames["ipv4 options"] = opts
	badOpts := cp(opts)
	copy(badOpts[34:], []byte{48, 48, 48, 48}) // option 48, length 48: ParseFrame skips it, gopacket rejects it
	frames["ipv4 malformed options"] = badOpts
	frames["ipv4 truncated"] = cp(v4[:40])
	frag := cp(v4)
	frag[20] |= 0x20
	frames["ipv4 fragment"] = frag
	udpLen := cp(v6)
	udpLen[59]++
	frames["ipv6 udp length"] = udpLen
	arp := cp(v4)
	arp[12], arp[13] = 0x08, 0x06
	frames["arp"] = arp

	for name, seeds := range map[string]map[string][]byte{"FuzzDecodeSignature": sigs, "FuzzParseFrame": frames} {
		dir := filepath.Join("testdata", "fuzz", name)
		for _, b := range seeds {
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
			file := filepath.Join(dir, fmt.Sprintf("%x", sha256.Sum256([]byte(content)))[:16])
			if *writeCorpus {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if got, err := os.ReadFile(file); err != nil || string(got) != content {
				t.Errorf("seed %s missing or stale (%v): run go test ./framing -run TestWriteFuzzCorpus -args -write-corpus", file, err)
			}
		}
	}
}
