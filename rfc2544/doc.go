// Package rfc2544 is the benchmarking methodology of RFC 2544 §26: throughput
// (binary, step and combo searches, §26.1), latency (§26.2, with RFC 5481
// delay variation), frame loss rate (§26.3), back-to-back frames (§26.4 as
// corrected by RFC 9004) and system recovery (§26.5).
//
// It decides which trials to run and what their results mean, and drives them
// through the small Tester interface, so the same procedures run on the real
// traffic engine (package trials) and on the simulated DUT of this package
// (SimDUT), which makes every procedure testable without root. It never opens
// a socket.
package rfc2544
