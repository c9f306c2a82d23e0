package framing

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSignatureVectors(t *testing.T) {
	tests := []struct {
		name string
		sig  Signature
		hex  string
	}{
		{
			name: "all fields",
			sig:  Signature{RunID: 0x2A, StreamID: 0x0102, Seq: 0xA1B2C3D4E5F6, TxNs: 0x1122334455667788},
			hex:  "c52a" + "0102" + "a1b2c3d4e5f6" + "1122334455667788",
		},
		{
			name: "zero",
			sig:  Signature{},
			hex:  "c500" + "0000" + "000000000000" + "0000000000000000",
		},
		{
			name: "negative time, max seq",
			sig:  Signature{RunID: 0xFF, StreamID: 0xFFFF, Seq: MaxSeq, TxNs: -2},
			hex:  "c5ff" + "ffff" + "ffffffffffff" + "fffffffffffffffe",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := hex.DecodeString(tt.hex)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != SignatureLen {
				t.Fatalf("vector is %d bytes", len(want))
			}
			got := make([]byte, SignatureLen+2)
			got[SignatureLen], got[SignatureLen+1] = 0x77, 0x88
			EncodeSignature(got, tt.sig)
			if diff := cmp.Diff(append(want, 0x77, 0x88), got); diff != "" {
				t.Errorf("EncodeSignature (-want +got):\n%s", diff)
			}
			dec, err := DecodeSignature(want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.sig, dec); diff != "" {
				t.Errorf("DecodeSignature (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeSignatureRejects(t *testing.T) {
	valid := make([]byte, SignatureLen)
	EncodeSignature(valid, Signature{RunID: 1})
	tests := []struct {
		name string
		in   []byte
	}{
		{name: "nil", in: nil},
		{name: "17 bytes", in: valid[:17]},
		{name: "payload pattern", in: func() []byte { p := make([]byte, 64); FillPayload(p); return p }()},
		{name: "all zeros", in: make([]byte, 18)},
		{name: "all ones", in: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{name: "wrong marker", in: append([]byte{0xC4}, valid[1:]...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := DecodeSignature(tt.in)
			if !errors.Is(err, ErrNotTestFrame) || sig != (Signature{}) {
				t.Errorf("DecodeSignature = %+v, %v; want zero, ErrNotTestFrame", sig, err)
			}
		})
	}
}

// stamped returns a stamped frame of family f and size.
func stamped(t testing.TB, f family, size int, sig Signature) []byte {
	t.Helper()
	tpl, err := NewTemplate(f.config(size))
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, tpl.Len())
	tpl.WriteFrame(frame, sig)
	return frame
}

func TestParseFrameAccepts(t *testing.T) {
	sig := Signature{RunID: 4, StreamID: 9, Seq: 77, TxNs: 1e18}
	v4, v6 := families[0], families[4]
	tests := []struct {
		name  string
		frame func() []byte
		want  FrameInfo
	}{
		{
			name:  "IPv4 with Ethernet padding after the IP packet",
			frame: func() []byte { return append(stamped(t, v4, 64, sig), 0, 0, 0, 0) },
			want: FrameInfo{Proto: IPv4UDP, SrcIP: v4.src, DstIP: v4.dst, SrcPort: 0xC020, DstPort: 7,
				FrameSize: 68},
		},
		{
			name: "IPv4 with 4 bytes of options",
			frame: func() []byte {
				f := stamped(t, v4, 64, sig)
				g := append(append(append([]byte(nil), f[:34]...), 1, 1, 1, 0), f[34:]...) // NOP NOP NOP EOL
				g[14] = 0x46
				binary.BigEndian.PutUint16(g[16:], binary.BigEndian.Uint16(g[16:])+4)
				return g
			},
			want: FrameInfo{Proto: IPv4UDP, SrcIP: v4.src, DstIP: v4.dst, SrcPort: 0xC020, DstPort: 7,
				FrameSize: 68},
		},
		{
			name:  "IPv6 tagged",
			frame: func() []byte { return stamped(t, families[5], 200, sig) },
			want: FrameInfo{Proto: IPv6UDP, VLANID: 7, SrcIP: v6.src, DstIP: v6.dst, SrcPort: 0xC020, DstPort: 7,
				FrameSize: 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info, err := ParseFrame(tt.frame())
			if err != nil {
				t.Fatal(err)
			}
			if got != sig {
				t.Errorf("signature %+v, want %+v", got, sig)
			}
			if diff := cmp.Diff(tt.want, info, cmpAddr); diff != "" {
				t.Errorf("info (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFrameRejects(t *testing.T) {
	sig := Signature{RunID: 1, StreamID: 2, Seq: 3, TxNs: 4}
	v4 := stamped(t, families[0], 128, sig)  // IPv4 at 14
	v4q := stamped(t, families[2], 128, sig) // IPv4 at 18, VLAN
	v6 := stamped(t, families[4], 128, sig)  // IPv6 at 14
	mod := func(base []byte, fn func(b []byte) []byte) []byte {
		return fn(append([]byte(nil), base...))
	}
	put16 := func(b []byte, off int, v uint16) []byte { binary.BigEndian.PutUint16(b[off:], v); return b }
	tests := []struct {
		name  string
		frame []byte
		want  error
	}{
		{name: "empty", frame: nil, want: errTruncated},
		{name: "13 bytes", frame: v4[:13], want: errTruncated},
		{name: "ethernet header only", frame: v4[:14], want: errTruncated},
		{name: "vlan tag cut", frame: v4q[:17], want: errTruncated},
		{name: "ipv4 header cut", frame: v4[:33], want: errTruncated},
		{name: "ipv6 header cut", frame: v6[:53], want: errTruncated},
		{name: "ARP", frame: mod(v4, func(b []byte) []byte { return put16(b, 12, 0x0806) }), want: errEtherType},
		{name: "QinQ outer tag", frame: mod(v4q, func(b []byte) []byte { return put16(b, 12, 0x88A8) }), want: errEtherType},
		{name: "version 6 under ethertype IPv4", frame: mod(v4, func(b []byte) []byte { b[14] = 0x65; return b }), want: errIPVersion},
		{name: "version 4 under ethertype IPv6", frame: mod(v6, func(b []byte) []byte { b[14] = 0x45; return b }), want: errIPVersion},
		{name: "ihl 4", frame: mod(v4, func(b []byte) []byte { b[14] = 0x44; return b }), want: errIPHeaderLen},
		{name: "ihl beyond frame", frame: mod(v4, func(b []byte) []byte { b[14] = 0x4F; return b[:70] }), want: errIPHeaderLen},
		{name: "total length beyond frame", frame: v4[:len(v4)-1], want: errIPLength},
		{name: "total length below header", frame: mod(v4, func(b []byte) []byte { return put16(b, 16, 19) }), want: errIPLength},
		{name: "more fragments", frame: mod(v4, func(b []byte) []byte { b[20] |= 0x20; return b }), want: errFragment},
		{name: "fragment offset", frame: mod(v4, func(b []byte) []byte { b[21] = 1; return b }), want: errFragment},
		{name: "TCP", frame: mod(v4, func(b []byte) []byte { b[23] = 6; return b }), want: errNotUDP},
		{name: "ipv6 hop-by-hop", frame: mod(v6, func(b []byte) []byte { b[20] = 0; return b }), want: errNotUDP},
		{name: "ipv6 payload beyond frame", frame: v6[:len(v6)-1], want: errIPLength},
		{name: "udp length +1", frame: mod(v4, func(b []byte) []byte { return put16(b, 38, binary.BigEndian.Uint16(b[38:])+1) }), want: errUDPLength},
		{name: "udp length -1", frame: mod(v6, func(b []byte) []byte { return put16(b, 58, binary.BigEndian.Uint16(b[58:])-1) }), want: errUDPLength},
		{name: "ip packet shorter than udp header", frame: mod(v4, func(b []byte) []byte { return put16(b, 16, 24) }), want: errUDPLength},
		{
			name: "udp payload of 17 bytes",
			frame: mod(v4, func(b []byte) []byte {
				put16(b, 16, 20+8+17)
				return put16(b, 38, 8+17)
			}),
			want: errShortSignature,
		},
		{name: "no marker", frame: mod(v4q, func(b []byte) []byte { b[46] = 0; return b }), want: errMarker},
		{name: "unstamped template", frame: mod(v6, func(b []byte) []byte { FillPayload(b[62:]); return b }), want: errMarker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, info, err := ParseFrame(tt.frame)
			if err != tt.want || !errors.Is(err, ErrNotTestFrame) {
				t.Errorf("ParseFrame error = %v, want %v", err, tt.want)
			}
			if sig != (Signature{}) || info != (FrameInfo{}) {
				t.Errorf("ParseFrame returned %+v %+v with an error", sig, info)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	sig := Signature{RunID: 1, StreamID: 2, Seq: 3, TxNs: 4}
	for _, f := range families {
		tpl, err := NewTemplate(f.config(1518))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, tpl.Len())
		tpl.CopyTo(buf)
		bad := append([]byte(nil), buf...)
		bad[tpl.PayloadOffset()] = 0
		payload := buf[tpl.PayloadOffset():]
		var sink Signature
		var info FrameInfo
		tests := []struct {
			name string
			fn   func()
		}{
			{name: "Stamp", fn: func() { sig.Seq++; tpl.Stamp(buf, sig) }},
			{name: "WriteFrame", fn: func() { sig.Seq++; tpl.WriteFrame(buf, sig) }},
			{name: "CopyTo", fn: func() { tpl.CopyTo(buf) }},
			{name: "EncodeSignature", fn: func() { EncodeSignature(payload, sig) }},
			{name: "DecodeSignature", fn: func() { sink, _ = DecodeSignature(payload) }},
			{name: "DecodeSignature error", fn: func() { sink, _ = DecodeSignature(payload[:3]) }},
			{name: "ParseFrame", fn: func() { sink, info, _ = ParseFrame(buf) }},
			{name: "ParseFrame error", fn: func() { sink, info, _ = ParseFrame(bad) }},
		}
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				if n := testing.AllocsPerRun(1000, tt.fn); n != 0 {
					t.Errorf("%s allocates %v times per call, want 0", tt.name, n)
				}
			})
		}
		_, _ = sink, info
		if got, inf, err := ParseFrame(buf); err != nil || got.Seq != sig.Seq || inf.SrcIP != f.src.Unmap() || !inf.DstIP.IsValid() {
			t.Errorf("%s: after the alloc runs ParseFrame = %+v %+v %v", f.name, got, inf, err)
		}
	}
}
