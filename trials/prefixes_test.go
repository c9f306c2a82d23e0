package trials

import (
	"net/netip"
	"testing"
)

func TestInBenchmarkRange(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want bool
	}{
		{"198.18.0.0", true},
		{"198.19.255.255", true},
		{"198.17.255.255", false},
		{"198.20.0.0", false},
		{"::ffff:198.18.1.2", true}, // IPv4-mapped: taken as IPv4
		{"2001:2::1", true},
		{"2001:2:0:ffff::1", true},
		{"2001:2:1::1", false},
		{"2001:db8::1", false},
		{"127.0.0.1", false},
	} {
		if got := InBenchmarkRange(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("InBenchmarkRange(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if got := InBenchmarkRange(netip.Addr{}); got {
		t.Errorf("InBenchmarkRange(zero Addr) = true, want false")
	}
	p := BenchmarkPrefixes()
	p[0] = netip.MustParsePrefix("10.0.0.0/8") // a caller's copy: the table stays
	if got := BenchmarkPrefixes(); got[0].String() != "198.18.0.0/15" || got[1].String() != "2001:2::/48" {
		t.Errorf("BenchmarkPrefixes() = %v, want [198.18.0.0/15 2001:2::/48]", got)
	}
}
