package benchnet

import (
	"net/netip"
	"testing"
)

func TestContains(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"198.18.0.0", true},
		{"198.19.255.255", true},
		{"198.17.255.255", false},
		{"198.20.0.0", false},
		{"::ffff:198.18.1.2", true},
		{"2001:2::1", true},
		{"2001:2:0:ffff::1", true},
		{"2001:2:1::1", false},
		{"2001:db8::1", false},
		{"127.0.0.1", false},
	} {
		if got := Contains(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Contains(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

func TestPrefixesFresh(t *testing.T) {
	p := Prefixes()
	if len(p) != 2 || !p[0].Addr().Is4() || !p[1].Addr().Is6() {
		t.Fatalf("Prefixes() = %v, want the IPv4 block then the IPv6 one", p)
	}
	p[0] = netip.Prefix{}
	if !Prefixes()[0].IsValid() {
		t.Error("Prefixes() shares its slice with callers")
	}
}
