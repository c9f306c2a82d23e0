// Package lab builds the built-in virtual testbed: network namespaces A, DUT
// and B joined by veth pairs, with a Linux-router DUT (IP forwarding) whose
// rate, queue, loss, firewall rules and MTU are set through netlink and
// nftables, a user-space relay DUT for exact delay, jitter, loss, reordering
// and duplication, and a loop topology (A wired to B) for calibrating the
// tester. Its settings are the ground truth integration tests check against.
package lab
