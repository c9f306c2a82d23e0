// Package benchnet holds the module's one table of benchmark address blocks
// (RFC 6815). trials.BenchmarkPrefixes and trials.InBenchmarkRange are its
// exported face; lab, whose addresses live in these blocks and which
// trials' tests import, reads it here.
package benchnet

import "net/netip"

// The address blocks RFC 2544 Appendix C (198.18.0.0/15, RFC 5735) and RFC
// 5180 (2001:2::/48) set aside for benchmarking. Read only.
var (
	IPv4 = netip.MustParsePrefix("198.18.0.0/15")
	IPv6 = netip.MustParsePrefix("2001:2::/48")
)

// Prefixes returns the benchmark blocks, IPv4 first, in a new slice.
func Prefixes() []netip.Prefix { return []netip.Prefix{IPv4, IPv6} }

// Contains reports whether a (an IPv4-mapped address is taken as IPv4) is
// inside a benchmark block.
func Contains(a netip.Addr) bool {
	a = a.Unmap()
	return IPv4.Contains(a) || IPv6.Contains(a)
}
