package trials

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

func TestNDRoundTrip(t *testing.T) {
	mac := [6]byte{2, 0, 0, 0, 0, 1}
	src := netip.MustParseAddr("2001:2:0:1::2")
	gw := netip.MustParseAddr("2001:2:0:1::1")
	b := make([]byte, ndFrameLen)
	n := putND(b, ndSolicit, mac, src, gw, netip.Addr{}, [6]byte{})
	// gopacket checks what we built: addresses, ICMPv6 checksum, option.
	pkt := gopacket.NewPacket(b[:n], layers.LayerTypeEthernet, gopacket.Default)
	eth := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip6 := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	icmp := pkt.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	ns, _ := pkt.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
	if ns == nil {
		t.Fatalf("not a neighbor solicitation: %v", pkt)
	}
	if got := eth.DstMAC.String(); got != "33:33:ff:00:00:01" {
		t.Errorf("dst mac %s, want the solicited-node group's 33:33:ff:00:00:01", got)
	}
	if got := ip6.DstIP.String(); got != "ff02::1:ff00:1" {
		t.Errorf("dst ip %s, want ff02::1:ff00:1", got)
	}
	if err := icmp.SetNetworkLayerForChecksum(ip6); err != nil {
		t.Fatal(err)
	}
	sb := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{ComputeChecksums: true}, icmp, gopacket.Payload(icmp.Payload)); err != nil {
		t.Fatal(err)
	}
	if want := sb.Bytes()[2:4]; want[0] != b[56] || want[1] != b[57] {
		t.Errorf("checksum %x, gopacket computes %x", b[56:58], want)
	}
	got, ok := parseND(b[:n])
	if !ok {
		t.Fatal("parseND: not ok")
	}
	want := ndPacket{Type: ndSolicit, EthSrc: mac, Src: src, Target: gw, LL: mac, HasLL: true}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("NS round trip (-want +got):\n%s", diff)
	}
	n = putND(b, ndAdvert, mac, src, src, gw, [6]byte{2, 0, 0, 0, 0, 9})
	got, ok = parseND(b[:n])
	want = ndPacket{Type: ndAdvert, EthSrc: mac, Src: src, Target: src, LL: mac, HasLL: true}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); !ok || diff != "" {
		t.Errorf("NA round trip ok=%v (-want +got):\n%s", ok, diff)
	}
	b[60] ^= 1 // corrupt
	if _, ok := parseND(b[:n]); ok {
		t.Error("parseND accepted a bad checksum")
	}
}
