// Package lab builds the built-in virtual testbed: network namespaces A, DUT
// and B joined by veth pairs, with a Linux-router DUT (IP forwarding) whose
// rate, queue, loss, firewall rules and MTU are set through netlink and
// nftables, a user-space relay DUT for exact delay, jitter, loss, reordering
// and duplication, and a loop topology (A wired to B) for calibrating the
// tester. Its settings are the ground truth integration tests check against.
//
// # Topologies and addresses
//
// Router (RFC 2544 App. C, RFC 5180 for IPv6):
//
//	ns r2544-NAME-a        ns r2544-NAME-dut                 ns r2544-NAME-b
//	a0 198.18.1.2/24  ---  dut-a 198.18.1.1   dut-b 198.19.1.1  ---  b0 198.19.1.2/24
//	   2001:2:0:1::2/64       2001:2:0:1::1      2001:2:0:8001::1     2001:2:0:8001::2/64
//
// A and B route 198.18.0.0/15 and 2001:2::/48 via the DUT (no default
// route), so traffic between the tester addresses crosses it. Neighbours
// are not static: testers learn the DUT's MAC by ARP/ND. DAD is off, so
// addresses work at once. Loop: one veth a0 (198.18.1.2, 2001:2:0:1::2) ↔
// b0 (198.18.1.3, 2001:2:0:1::3) on one subnet; each port's gateway is the
// other port.
//
// Interface names exist only inside the lab's namespaces; every name derives
// from the lab name, so Down finds the leftovers of a crashed Up without
// state. Up records a State in StateDir/NAME.json.
//
// # Kernel DUT
//
// Per direction, on the DUT port that sends towards the receiver: tbf (rate,
// burst) over a pfifo (limit in packets); random loss and a firewall of N
// non-matching rules in an nftables forward chain (table inet rfc2544). Delay
// and jitter need netem (CONFIG_NET_SCH_NETEM); without it Up says so and
// points to the relay. Features are probed once per process in a throw-away
// namespace.
//
// # CPUs
//
// veth forwarding runs on the sending CPU, so without care a slow DUT slows
// the sender instead of dropping. On boxes with more than one CPU the DUT's
// ports steer their receive work (RPS) to the last CPU (State.DUTCPUs) and the
// tester ports to the others: an overrun DUT then drops at its ingress
// (counted in DUTCounters.DutA.RxDropped and the tester port's tx_dropped).
// rps_cpus is per network namespace in sysfs, so it is written through a
// fresh sysfs mounted in a private mount namespace on a throw-away thread.
//
// Testers should know: (1) keep sending threads off State.DUTCPUs; (2) a
// veth keeps a frame charged to the sending socket until the DUT has
// forwarded it, so a sender with the default SO_SNDBUF (~200 KB) blocks long
// before the DUT's 1000-frame backlog fills: set SO_SNDBUF(FORCE) well above
// it or overload shows as back-pressure, not loss; (3) checksum, TSO, GSO and
// scatter-gather offloads are off on a0 and b0, so kernel sockets send real,
// checksummed, MTU-sized frames.
//
// # A DUT that drops, or one that pushes back
//
// In a veth's plain mode the sender's transmit call runs the far end's
// receive: with RPS that is the enqueue to the DUT CPU's backlog, and when
// the backlog is full the drop is returned to the sender (NET_XMIT_DROP,
// ENOBUFS), which PACKET_TX_RING answers by sending the frame again. An
// overrun DUT then holds the tester back instead of dropping (measured with
// 3000 rules: the sender offered 24 kfps and the DUT lost nothing). By
// default Up gives the tester ports a transmit queue (a pfifo,
// State.TesterQdisc): a sender that goes through it (trials
// Config.QdiscPath; the CLI does so on a lab) hands frames to the queue, the
// queue hands them to the veth, and a drop at the DUT's backlog ends there,
// unseen by the sender, as on a wire. (Turning GRO on at the DUT's ingress,
// which puts a veth in NAPI mode, also hides the drop, but its receive then
// runs in a softirq on the sender's CPU, which a busy sender starves: the
// veth's ring fills and the push-back returns.)
// Config.DUTBackpressure (lab up --dut-backpressure) leaves the queue out,
// to test a tester's flow-control verdict.
//
// # Firewall rule sets
//
// FWRules are linear non-matching rules; FWStateful makes the chain a
// conntrack rule base (established/related accept, invalid drop, new test
// flows accepted by an explicit rule, drop policy); FWSet adds one lookup
// in a set of that many addresses. All through google/nftables.
//
// # Relay DUT
//
// With DUT relay, kernel forwarding is off in the DUT namespace (its kernel
// still answers ARP/ND and pings to its own addresses) and a background
// process (package lab/relay), a copy of the running binary that enters the
// relay by calling relay.Enter first thing in main (and in the TestMain of a
// test binary that brings up a relay lab), forwards IPv4/IPv6 frames between dut-a and dut-b with AF_PACKET: it
// rewrites MACs, decrements TTL/hop limit (IPv4 checksum updated
// incrementally) and releases each frame at its due time from a heap,
// sleeping with nanosleep on its own locked thread near the due time (Go
// timers were up to 1 ms late). It counts what it dropped, reordered and
// duplicated (State.RelayStats). Up measures its ceiling before it goes live
// (State.RelayCeilingFPS). Down stops it by PID after checking its marker
// environment variable and start time.
package lab
