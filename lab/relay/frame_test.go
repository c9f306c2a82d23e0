package relay

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ipv4Frame is a 60-byte Ethernet/IPv4/UDP frame with a valid header
// checksum.
func ipv4Frame(ttl byte, dst [4]byte) []byte {
	f := make([]byte, 60)
	binary.BigEndian.PutUint16(f[12:], etherTypeIPv4)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, ttl, 17
	binary.BigEndian.PutUint16(ip[2:], 46)
	copy(ip[12:], []byte{198, 18, 1, 2})
	copy(ip[16:], dst[:])
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	return f
}

func TestRewriteFrame(t *testing.T) {
	dst := net.HardwareAddr{2, 0, 0, 0, 0, 0xb}
	src := net.HardwareAddr{2, 0, 0, 0, 0, 0xd}
	local := &dutAddrs{v4: [][4]byte{{198, 18, 1, 1}}, v6: [][16]byte{netip.MustParseAddr("2001:2:0:1::1").As16()}}
	v6 := func(hop byte, dst string) []byte {
		f := make([]byte, 14+40)
		binary.BigEndian.PutUint16(f[12:], etherTypeIPv6)
		f[14], f[14+7] = 0x60, hop
		a := netip.MustParseAddr(dst).As16()
		copy(f[14+24:], a[:])
		return f
	}
	tests := []struct {
		name    string
		frame   []byte
		want    int
		wantTTL byte
	}{
		{name: "v4 forward", frame: ipv4Frame(64, [4]byte{198, 19, 1, 2}), want: frameForward, wantTTL: 63},
		{name: "v4 ttl 255", frame: ipv4Frame(255, [4]byte{198, 19, 1, 2}), want: frameForward, wantTTL: 254},
		{name: "v4 ttl 2", frame: ipv4Frame(2, [4]byte{198, 19, 1, 2}), want: frameForward, wantTTL: 1},
		{name: "v4 ttl 1 expires", frame: ipv4Frame(1, [4]byte{198, 19, 1, 2}), want: frameExpired},
		{name: "v4 to the DUT", frame: ipv4Frame(64, [4]byte{198, 18, 1, 1}), want: frameLocal},
		{name: "v6 forward", frame: v6(64, "2001:2:0:8001::2"), want: frameForward, wantTTL: 63},
		{name: "v6 link-local", frame: v6(255, "fe80::1"), want: frameLocal},
		{name: "v6 multicast", frame: v6(255, "ff02::1"), want: frameLocal},
		{name: "v6 to the DUT", frame: v6(64, "2001:2:0:1::1"), want: frameLocal},
		{name: "arp", frame: append(make([]byte, 12), 0x08, 0x06, 0, 0), want: frameNotIP},
		{name: "truncated", frame: make([]byte, 10), want: frameNotIP},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := append([]byte(nil), tt.frame...)
			if got := rewriteFrame(f, dst, src, local); got != tt.want {
				t.Fatalf("verdict %d, want %d", got, tt.want)
			}
			if tt.want != frameForward {
				if diff := cmp.Diff(tt.frame, f); diff != "" {
					t.Errorf("frame changed though not forwarded:\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff([]byte(dst), f[0:6]); diff != "" {
				t.Errorf("dst MAC:\n%s", diff)
			}
			if diff := cmp.Diff([]byte(src), f[6:12]); diff != "" {
				t.Errorf("src MAC:\n%s", diff)
			}
			if f[12] == 0x08 {
				if f[14+8] != tt.wantTTL {
					t.Errorf("TTL %d, want %d", f[14+8], tt.wantTTL)
				}
				// A valid header sums to zero (checksum of it is 0).
				if c := ipChecksum(f[14:34]); c != 0 {
					t.Errorf("IPv4 header checksum invalid after rewrite: residue %#04x", c)
				}
			} else if f[14+7] != tt.wantTTL {
				t.Errorf("hop limit %d, want %d", f[14+7], tt.wantTTL)
			}
		})
	}
}

// TestRewriteChecksumAllTTLs checks the incremental checksum against a full
// recomputation for every TTL and many header contents.
func TestRewriteChecksumAllTTLs(t *testing.T) {
	local := &dutAddrs{}
	for ttl := 2; ttl < 256; ttl++ {
		for id := 0; id < 65536; id += 251 {
			f := ipv4Frame(byte(ttl), [4]byte{198, 19, byte(id), byte(id >> 8)})
			binary.BigEndian.PutUint16(f[14+4:], uint16(id))
			binary.BigEndian.PutUint16(f[14+10:], 0)
			binary.BigEndian.PutUint16(f[14+10:], ipChecksum(f[14:34]))
			rewriteFrame(f, net.HardwareAddr{1, 2, 3, 4, 5, 6}, net.HardwareAddr{1, 2, 3, 4, 5, 6}, local)
			got := binary.BigEndian.Uint16(f[14+10:])
			binary.BigEndian.PutUint16(f[14+10:], 0)
			want := ipChecksum(f[14:34])
			if got != want && !(got == 0xffff && want == 0) && !(got == 0 && want == 0xffff) {
				t.Fatalf("ttl %d id %d: incremental checksum %#04x, recomputed %#04x", ttl, id, got, want)
			}
		}
	}
}

func TestSlotHeap(t *testing.T) {
	h := newSlotHeap(8)
	in := []struct {
		due int64
		seq uint64
	}{{50, 1}, {10, 2}, {30, 3}, {10, 4}, {70, 5}, {20, 6}, {30, 7}, {0, 8}}
	for i, e := range in {
		h.push(int32(i), e.due, e.seq)
	}
	var got []uint64
	for h.len() > 0 {
		s, _, _ := h.peek()
		if h.pop() != s {
			t.Fatal("pop differs from peek")
		}
		got = append(got, h.seq[s])
	}
	if diff := cmp.Diff([]uint64{8, 2, 4, 6, 3, 7, 1, 5}, got); diff != "" {
		t.Errorf("order by due, then sequence (-want +got):\n%s", diff)
	}
}

func TestPerFrameAllocs(t *testing.T) {
	dst := net.HardwareAddr{2, 0, 0, 0, 0, 0xb}
	local := &dutAddrs{v4: [][4]byte{{198, 18, 1, 1}}}
	f := ipv4Frame(255, [4]byte{198, 19, 1, 2})
	if n := testing.AllocsPerRun(1000, func() {
		f[14+8] = 64
		rewriteFrame(f, dst, dst, local)
	}); n != 0 {
		t.Errorf("rewriteFrame allocates %v times per frame", n)
	}
	h := newSlotHeap(64)
	var seq uint64
	if n := testing.AllocsPerRun(1000, func() {
		for i := range int32(32) {
			seq++
			h.push(i, int64(seq*7919%1000), seq)
		}
		for h.len() > 0 {
			h.pop()
		}
	}); n != 0 {
		t.Errorf("slotHeap allocates %v times per 32 frames", n)
	}
}
