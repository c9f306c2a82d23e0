// Package trials is the traffic engine. It owns the ports (raw AF_PACKET and
// kernel UDP sockets, optionally inside a network namespace), learning (ARP and
// neighbor discovery), pacing, transmit and receive, per-stream counters
// (sent, received, lost, reordered, duplicate, late), latency histograms and
// kernel drop detection. One Spec run is one trial and yields one Result.
//
// trials knows nothing of RFC 2544's search rules: package rfc2544 decides which
// trials to run and what their results mean.
//
// # Layout
//
// A trial is written once (trial_linux.go): validate, the transport's
// checks, the rate cap, learning, run id, streams and pacers, receivers,
// traffic and the settle wait, counters, tester-limit reasons. A transport
// implements a small internal interface under it: open its ports, ready a
// stream's frames, send paced batches (one pace loop for all), receive
// frames with their timestamps into the shared counters, report its kernel
// drops and paths. The raw transport is raw_*.go (Engine), the UDP
// transport udp_*.go (UDPEngine, and the halves of two-host trials in
// udp_half*.go), the AF_XDP transport xdp_*.go
// (XDPEngine); no file of one transport calls into another's. The raw and
// xdp ports share one ARP/ND neighbour (neighbour_linux.go: answers for the
// tester's addresses, the DUT's MAC, the frame-size checks). Counters and latency are receiver.go, rxstats.go and latency.go,
// pacing pacer.go, the tester-limit rules limits.go and trial.go.
//
// # The raw engine
//
//	e, err := trials.Open(ctx, trials.Config{A: a, B: b})   // ports, receivers, ARP
//	defer e.Close()
//	res, err := e.Run(ctx, spec)                             // one trial (rfc2544.Tester)
//	e.Paths()                                                // kernel paths in use
//	pts, err := trials.Calibrate(ctx, cfg, sizes, 2*time.Second) // tester ceiling on a loop
//	                                          // (CalibrateXDP: the xdp transport's)
//	cfg.CeilingFPS = trials.CeilingMap(pts)
//	trials.Generate(ctx, genCfg)                             // generator only (benchmarks)
//
// A PortConfig is shaped like lab.Port: a caller building a Config from a lab
// maps Namespace, Interface, IPv4 → Addr, GatewayV4 → Gateway (and the IPv6
// pair) field by field.
//
// The engine's internals (AF_PACKET rings and BPF filter, ARP and neighbor
// discovery, the emulated MAC, transmit, stamps, counters) are described in
// ENGINE.md beside this file.
//
// Tester-limited. A trial is marked tester-limited, never DUT loss, when the
// kernel dropped frames at a receiving socket (PACKET_STATISTICS, which
// resets on read: the engine accumulates), when the kernel refused frames,
// when the generator fell short of the intended load by more than
// Config.TesterLimitTolerance (or could not send every planned frame in
// time), when it fell more than Config.MaxLag behind schedule and the
// catch-up burst could explain all the loss, or when a lossy trial's
// intended rate is at or above the calibrated ceiling (Config.CeilingFPS).
//
// # The UDP transport
//
//	u, err := trials.OpenUDP(ctx, trials.UDPConfig{A: a, B: b}) // receive sockets
//	defer u.Close()
//	res, err := u.Run(ctx, spec)                                 // same Spec, same Result
//
// Kernel UDP sockets on each side (UDPPortConfig: an address per family and
// a receive port, optionally a network namespace, which needs root; without
// one nothing needs privileges), so it runs over any routed path, e.g.
// between two cloud VMs. A frame of F bytes becomes a datagram of
// framing.UDPPayloadSize(F) bytes (F − 46 for IPv4, F − 66 for IPv6) and
// results stay in RFC 2544 frame sizes; the smallest sizes are 64 (IPv4) and
// 84 (IPv6) bytes, and a frame whose IP packet exceeds UDPConfig.PathMTU is
// refused (the sockets set IP_PMTUDISC_DO and never fragment). The
// signature, counters, latency histograms, pacer and tester-limited rules
// are the raw engine's. Each flow of a stream is its own connected send
// socket (its own ephemeral source port, so a multi-queue DUT spreads the
// flows by RSS); frame n goes to flow n mod Flows and reordering is judged
// per flow. Before traffic each send socket sends one unsigned datagram so
// the kernels on the path resolve their neighbors (ARP/ND), then the engine
// waits Spec.Learning, at least 20 ms.
//
// The UDP transmit and receive paths are described in ENGINE.md.
//
// # Bidirectional trials
//
// A Spec with an A->B and a B->A stream is bidirectional (RFC 2544 §14):
// both engines send the same RateFPS from each side at once and report each
// stream on its own; Result.Direction sums one direction's streams,
// StreamResult.ReceivedFPS is a stream's received rate, and Result.Passed
// holds only when every stream passes.
//
// # Progress while a trial runs
//
// A Spec with OnInterval hears of the trial every IntervalPeriod (1 s) of
// traffic and once after the settle wait: an Interval with the frames
// offered and received in it, the loss so far and the latency min/avg/max
// of its frames; a trial's intervals add up to its Sent and Received. Both
// engines report them from the one trial skeleton; the intervals change no
// measured figure. A two-host trial reports this host's halves' counts as
// Partial intervals, then a final one with both hosts' totals.
//
// # Two-host trials
//
//	e, err := trials.NewRemote(trials.RemoteConfig{Local: a}, remote) // port B elsewhere
//	res, err := e.Run(ctx, spec)                                     // same Spec, same Result
//
// A RemoteEngine is a transport under the one trial skeleton whose port B
// runs on another host: port A's UDP sockets here (the one pace loop),
// port B driven through a Remote (set up at learning, started before
// traffic, stopped with port A's sent counts after the settle wait;
// package trials/agent's Client over its control connection), both hosts'
// counters merged into one Result (remote.go, remote_linux.go). On the far
// host, RemotePort is port B's sockets: Receive counts (and reflects) the
// A->B streams, Send sends the B->A ones, to and from port A's address
// only.
//
// # Safety and portability
//
// Open, OpenUDP and Generate refuse test addresses outside
// BenchmarkPrefixes (RFC 6815; the UDP transport also takes loopback) unless
// the config sets AllowAnyDestination, and a trial above MaxRateFPS is
// refused before any frame. Off Linux every entry point fails with
// an error matching ErrNotSupported.
package trials
