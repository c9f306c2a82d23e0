package trials

import (
	"net/netip"

	"github.com/rfc2544/rfc2544/internal/benchnet"
)

// The benchmark blocks, as the engines' address checks name them.
var (
	benchNet4 = benchnet.IPv4
	benchNet6 = benchnet.IPv6
)

// BenchmarkPrefixes returns the benchmark address blocks, 198.18.0.0/15 and
// 2001:2::/48 (RFC 2544 Appendix C, RFC 5180): the only test addresses the
// engines accept unless a config sets AllowAnyDestination (RFC 6815).
func BenchmarkPrefixes() []netip.Prefix { return benchnet.Prefixes() }

// InBenchmarkRange reports whether a (an IPv4-mapped address is taken as
// IPv4) is inside a benchmark address block.
func InBenchmarkRange(a netip.Addr) bool { return benchnet.Contains(a) }
