package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/trials"
)

// gen is a hidden benchmark verb: the engine's transmit path alone, so
// internal/bench can put it beside trafgen in the same run.
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	var (
		ns     = fs.String("ns", "", "network namespace of the interface (empty: the current one)")
		dev    = fs.String("dev", "", "interface to send on (required)")
		dmac   = fs.String("dmac", "", "destination MAC of the frames (required)")
		srcIP  = fs.String("src-ip", "198.18.0.2", "source IPv4 address (198.18.0.0/15)")
		dstIP  = fs.String("dst-ip", "198.19.0.2", "destination IPv4 address (198.18.0.0/15)")
		dport  = fs.Uint("dport", 7, "UDP destination port")
		frame  = fs.Int("frame", 64, "RFC 2544 frame size in bytes, FCS included")
		secs   = 5 * time.Second
		fps    float64
		noRing = fs.Bool("no-tx-ring", false, "use sendto per frame instead of PACKET_TX_RING")
		qdisc  = fs.Bool("qdisc", false, "send through the qdisc instead of PACKET_QDISC_BYPASS")
		batch  = fs.Int("batch", 0, "frames per transmit call (0 = default)")
		asJSON = fs.Bool("json", false, "print the result as JSON")
		tport  = fs.String("transport", "raw", "transmit path: raw (AF_PACKET) or xdp (AF_XDP)")
		queues = fs.Int("queues", 1, "sending threads, each with its own socket on its own CPU at 1/N of --rate (xdp: socket q on queue q; raw: the kernel picks the queue by flow, source port 0xC020+q)")
	)
	fs.Func("rate", "intended frame `rate`, e.g. 100000, 148.8kpps or 1.488Mpps; 0 = as fast as possible", func(v string) (err error) {
		if strings.TrimSpace(v) == "0" {
			fps = 0
			return nil
		}
		fps, err = rate.ParseFrames(v)
		return err
	})
	fs.Func("secs", "how long to send: a `duration`, or whole seconds (default 5s)", func(v string) (err error) {
		if n, aerr := strconv.Atoi(v); aerr == nil && n >= 0 {
			secs = time.Duration(n) * time.Second // whole seconds, as peers.sh passes them
			return nil
		}
		secs, err = time.ParseDuration(v)
		return err
	})
	helpOn(fs, stdout, "Usage: rfc2544 gen --dev IF --dmac MAC [--frame 64] [--secs 5s] [--rate FPS]\n\nBenchmark mode: the generator alone, no receiver, no ARP.\n")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return usagef("gen: %s", flagError(err))
	}
	mac, err := net.ParseMAC(*dmac)
	if err != nil || len(mac) != 6 {
		return usagef("gen --dmac %q: want a MAC such as 02:00:00:00:00:01", *dmac)
	}
	if *dev == "" {
		return usagef("gen --dev: required, e.g. --dev p1")
	}
	src, err := netip.ParseAddr(*srcIP)
	if err != nil {
		return usagef("gen --src-ip %q: %v", *srcIP, err)
	}
	dst, err := netip.ParseAddr(*dstIP)
	if err != nil {
		return usagef("gen --dst-ip %q: %v", *dstIP, err)
	}
	if *dport > 65535 {
		return usagef("gen --dport %d: want 0..65535", *dport)
	}
	if *queues < 1 || *queues > runtime.NumCPU() {
		return usagef("gen --queues %d: want 1 to %d, one sending thread per CPU this process may run on (see taskset)", *queues, runtime.NumCPU())
	}
	generate := trials.Generate
	switch *tport {
	case transportRaw:
	case transportXDP:
		generate = trials.GenerateXDP
	default:
		return usagef("gen --transport %s: want raw or xdp", quoteShort(*tport))
	}
	res, err := generate(ctx, trials.GenConfig{Namespace: *ns, Interface: *dev, DstMAC: mac, SrcIP: src, DstIP: dst,
		DstPort: uint16(*dport), FrameSize: *frame, RateFPS: fps, Duration: secs, NoTxRing: *noRing, QdiscPath: *qdisc, Batch: *batch,
		Queues: *queues})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("gen: %w", err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	xdp := ""
	if res.Paths.XDP != "" {
		xdp = " xdp " + strings.ReplaceAll(res.Paths.XDP, " ", "")
	}
	_, werr := fmt.Fprintf(stdout, "sent %d failed %d seconds %.6f offered_fps %.1f tx %s qdisc_bypass %v%s queues %d\n",
		res.Sent, res.Failed, res.Seconds, res.OfferedFPS, res.Paths.TX, res.Paths.QdiscBypass, xdp, res.Queues)
	return werr
}
