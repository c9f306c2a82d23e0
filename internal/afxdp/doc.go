// Package afxdp is the AF_XDP layer of the traffic engine: one socket per
// queue of a port, with its own UMEM, fill/completion/RX/TX rings (mmapped,
// producer and consumer indices shared with the kernel through sync/atomic),
// need-wakeup, and the XDP program that redirects test frames to it, built
// with cilium/ebpf's asm package from Go (no clang, no C at build time) and
// attached with cilium/ebpf/link.
//
// # Modes and the probe
//
// Open attaches the program in the driver (native XDP) where the driver has
// it and on the skb path (generic XDP) otherwise, binds the socket with
// need-wakeup, lets the kernel choose zero-copy where the driver supports it
// for the queue and copy mode else, and raises the copy-mode send budget
// (XDP_MAX_TX_SKB_BUDGET) where the kernel has it. Features says which path
// ran; a report should carry it. When AF_XDP cannot run, the error wraps
// ErrNotSupported, names what is missing (the OS, the kernel's AF_XDP or
// XDP, the driver, the privileges, the locked-memory limit) and suggests the
// raw transport.
//
// # The filter
//
// The XDP program redirects to the socket of the frame's receive queue only
// Ethernet II [+ one 802.1Q tag] + IPv4 (no options, no fragment) or IPv6
// (no extension headers) + UDP frames whose payload starts with the test
// signature's marker (framing.SignatureMarker), and, when Config.DstPort is
// set, only those to that UDP port. Everything else — ARP, neighbour
// discovery, the host's own traffic — goes on to the kernel (XDP_PASS), as
// does a test frame for a queue without a socket. The receiver still decodes
// and matches every frame (framing.ParseFrame, run id, stream id): the
// one-byte marker is a coarse filter, not a proof.
//
// # Sending
//
// PrepareTx copies each stream's templates (package framing) into its share
// of the TX chunks once; Send then only stamps the 18-byte signature (and the
// UDP checksum) in place and queues descriptors, so a frame costs no copy and
// no allocation. Completions return chunks to their stream. Generate is a
// paced or full-speed loop over Send for the generator-only benchmark.
//
// # Receiving
//
// Receive returns frames that point into the UMEM, valid until the next
// call, with their receive time: the kernel's clock read by the XDP program
// (bpf_ktime_get_ns, written into 16 bytes of XDP metadata in front of the
// frame, or, on kernels that refuse XDP programs bpf_xdp_adjust_meta, into
// 16 bytes the program prepends to the frame and Receive strips) converted
// to CLOCK_REALTIME by the offset measured at Open, the clock of the
// signature's TxNs; or, for a frame without a stamp, the time it was read
// from the ring (Stats.RxUserStamps counts them).
//
// # How it plugs into the trial skeleton
//
// The trial skeleton of package trials (issue 11/13) owns validation, rate
// caps, run ids, streams, pacing, counters and tester-limit verdicts; a
// transport opens ports, sends a paced batch, receives a batch with
// timestamps and reports its counters. An xdp transport is a thin adapter:
// open one Socket per queue of a port (Config.Queue; RX and TX on the same
// socket, or two sockets), PrepareTx with the trial's streams, and per
// pacer tick call Send(stream, due, runID, seq, now) — the frames it did not
// queue are the tester's limit, never the DUT's loss. The receive loop calls
// Receive and hands each Frame to the same signature decoding and per-stream
// accounting the raw receiver uses; Stats.RxRingFull and FillRingEmpty are
// the receiver's own drops (tester-limited). Learning (ARP/ND) stays on the
// raw socket: the XDP program passes those frames to the kernel.
//
// Not yet: each RX socket attaches its own program and XSKMAP, so an
// interface carries one RX socket; several queues per port (issue 14 item
// 2) need one program and map per port shared by the sockets of its queues.
// Frames larger than a 4096-byte chunk allows (MaxFrameSize) need AF_XDP
// multi-buffer (XDP_USE_SG), not done: jumbo frames stay on the raw transport.
package afxdp
