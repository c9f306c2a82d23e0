package trials

import "net/netip"

// The address blocks RFC 2544 Appendix C (198.18.0.0/15, RFC 5735) and RFC
// 5180 (2001:2::/48) set aside for benchmarking; RFC 6815 asks test traffic
// to stay in them.
var (
	benchNet4 = netip.MustParsePrefix("198.18.0.0/15")
	benchNet6 = netip.MustParsePrefix("2001:2::/48")
)

// BenchmarkPrefixes returns the benchmark address blocks, 198.18.0.0/15 and
// 2001:2::/48 (RFC 2544 Appendix C, RFC 5180): the only test addresses the
// engines accept unless a config sets AllowAnyDestination (RFC 6815).
func BenchmarkPrefixes() []netip.Prefix { return []netip.Prefix{benchNet4, benchNet6} }

// InBenchmarkRange reports whether a (an IPv4-mapped address is taken as
// IPv4) is inside a benchmark address block.
func InBenchmarkRange(a netip.Addr) bool {
	a = a.Unmap()
	return benchNet4.Contains(a) || benchNet6.Contains(a)
}
