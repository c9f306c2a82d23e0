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
// transport udp_*.go (UDPEngine, and the two-host halves of package
// trials/agent in udp_half*.go); no file of one transport calls into the
// other's. Counters and latency are receiver.go, rxstats.go and latency.go,
// pacing pacer.go, the tester-limit rules limits.go and trial.go.
//
// # The raw engine
//
//	e, err := trials.Open(ctx, trials.Config{A: a, B: b})   // ports, receivers, ARP
//	defer e.Close()
//	res, err := e.Run(ctx, spec)                             // one trial (rfc2544.Tester)
//	e.Paths()                                                // kernel paths in use
//	pts, err := trials.Calibrate(ctx, cfg, sizes, 2*time.Second) // tester ceiling on a loop
//	cfg.CeilingFPS = trials.CeilingMap(pts)
//	trials.Generate(ctx, genCfg)                             // generator only (benchmarks)
//
// A PortConfig is shaped like lab.Port: a caller building a Config from a lab
// maps Namespace, Interface, IPv4 → Addr, GatewayV4 → Gateway (and the IPv6
// pair) field by field.
//
// Ports. Each port has two AF_PACKET sockets opened inside its namespace on a
// locked OS thread (internal/nsutil): a send socket with a TPACKET_V2 TX
// ring and PACKET_QDISC_BYPASS (except on a port without a qdisc, such as a
// veth, where the qdisc path is a direct transmit and measured faster), and a
// receive socket with a TPACKET_V2 RX ring
// (16 384 slots of 256 bytes), a classic BPF filter (golang.org/x/net/bpf,
// SO_ATTACH_FILTER) that keeps only ARP and the test frames of the current
// run (signature marker and run id) and IPv6 neighbor solicitations and
// advertisements, truncated to 128 bytes, and
// PACKET_IGNORE_OUTGOING. Result.Paths records what was used ("tx_ring" or
// "sendto", qdisc bypass, "rx_ring", "kernel-sw" timestamps).
//
// Learning and ARP. A goroutine per port reads its RX ring for the engine's
// whole life: it answers the DUT's ARP requests for the tester's address on
// that port, and its neighbor solicitations for the IPv6 one (the DUT asks
// before forwarding to it, and the address need not
// be configured on the port's kernel) and learns the DUT's MAC from its ARP.
// Open resolves the DUT's MAC on both sides (Config.ResolveTimeout); a trial
// with Spec.Learning > 0 sends ARP requests to the DUT on both sides
// (RFC 2544 §23 learning frames: they also teach the DUT the tester's
// addresses) and then waits Spec.Learning. A DUT that does not answer is an
// error naming the port, the address and the time waited (ErrNoAnswer).
// IPv6 works alike with neighbor discovery (RFC 4861): the engine joins the
// solicited-node group of each port's Addr6, answers the DUT's neighbor
// solicitations for it, and solicits Gateway6 at the first IPv6 trial (and
// at every IPv6 trial with learning).
//
// By default the tester uses, on each port, an emulated MAC derived from the
// interface's (02:25:44 plus its last three bytes), as hardware testers
// emulate hosts: test frames addressed to it reach the engine's socket but
// not the port's own kernel IP stack. The port's kernel may still answer the
// DUT's ARP with the interface's MAC; frames the DUT sends there are received
// and counted just the same. Config.UseInterfaceMAC turns this off.
//
// Transmit. A goroutine per sending port, locked to its OS thread (nice −10
// when permitted, optionally pinned with Config.TxCPU), builds frames from
// framing templates into the TX ring, stamping each in place (only the
// 18-byte signature changes), and kicks the ring with one non-blocking
// sendto per batch (Config.Batch, 256 by default). A frame counts as sent
// only when the kernel has released its ring slot as sent; frames the kernel
// rejects are counted failed, never sent, and make the trial tester-limited.
// Pacing is the pure Pacer; a sender that falls behind by more than 0.5 ms
// (its host did not schedule it) spreads the backlog over the rest of the
// trial at most 5 % faster than the intended rate instead of sending it back
// to back, so a stall of the tester does not become a burst that overflows
// a small DUT queue. StreamResult.MaxLagNs records how far it fell behind,
// CatchUpOverspeed the peak overspeed and CatchUpBurstFrames what the spread
// could not absorb by the end.
//
// Timestamps. The transmit time in the signature is CLOCK_REALTIME read once
// per batch, just before the batch is written into the ring (and again after
// any wait for ring space): every frame of a batch carries that reading, and
// the kernel sends the batch's frames one after the other, so a frame's stamp
// precedes its real departure by at most one batch's send time: tens of µs
// for paced trials (at most 32 frames per batch), up to about 0.5 ms in
// full-speed bursts (Config.Batch, 256 frames). The receive time is the kernel's
// software timestamp in the RX ring header, also CLOCK_REALTIME, taken when
// the frame reaches the receiving socket. Latency = receive − transmit.
//
// Receive and counters. Per stream: Received counts distinct frames that
// arrived by the end of the settle wait (their kernel timestamp decides);
// Lost = Sent − Received; Reordered counts frames with a sequence number
// below one already received; Duplicate counts extra copies, found with a
// sliding bitmap of 65 536 sequence numbers per stream (memory is flat in
// trial length); Late counts frames that arrived in the LateGrace after the
// settle wait (they are lost). The settle wait ends Spec.Settle after the
// last transmit stamp; frames the receiver handles before every transmitter
// has finished are on time, so a Settle under about a millisecond may count
// a frame or two of the last batch received rather than late. Latency goes into an HDR histogram (1 ns to
// 100 s, 3 significant digits) plus exact min/max/mean, PDV, IPDV over
// consecutive sequence numbers and RFC 3550 jitter. Nothing is stored per
// frame.
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
// Transmit: a goroutine per sending side, locked to its thread (nice −10,
// Config.TxCPU), stamps the batch's datagrams (one clock reading per batch)
// and hands each flow's share to the kernel in one call: one buffer with
// UDP_SEGMENT (segmentation offload: the kernel splits it into datagrams
// below the UDP layer; in software at the port when the port has no GSO, so
// the DUT sees ordinary datagrams), or, when the kernel refuses that,
// sendmmsg through golang.org/x/net's WriteBatch. Result.Paths.TX says which
// ("sendmmsg+udp_segment" or "sendmmsg"). Send and receive buffers are
// 64 MiB (SO_SNDBUFFORCE/SO_RCVBUFFORCE when permitted, else capped by the
// system limits).
//
// Receive: a goroutine per receiving side reads with recvmmsg (its own call
// on the socket's descriptor, through the Go poller: x/net's ReadBatch
// allocates each datagram's source address) into buffers one byte longer
// than the expected payload, so a datagram of the wrong size is counted as
// such. The receive time is the kernel's SO_TIMESTAMPNS (CLOCK_REALTIME,
// taken when the frame entered the stack; Paths.Timestamps "kernel-sw").
// Kernel drops at the receiving socket (SO_RXQ_OVFL, and the socket's drop
// counter from SO_MEMINFO over the trial, the larger of the two) make the
// trial tester-limited. Neither path allocates per datagram.
//
// # Bidirectional trials
//
// A Spec with an A->B and a B->A stream is bidirectional (RFC 2544 §14):
// both engines send the same RateFPS from each side at once and report each
// stream on its own; Result.Direction sums one direction's streams,
// StreamResult.ReceivedFPS is a stream's received rate, and Result.Passed
// holds only when every stream passes.
package trials
