// Command xdpgen is the generator-only side of the AF_XDP benchmark
// (internal/bench/xdp.sh): it sends one stream of test frames from
// package framing's template through an AF_XDP socket (package
// internal/afxdp) for a while, paced or at full speed, and prints what it
// did and which path ran as one JSON line. It sends only to addresses in
// the benchmark ranges (RFC 6815) and runs in the caller's network
// namespace; the benchmark runs it inside a namespace it created.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afxdp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "xdpgen:", err)
		os.Exit(1)
	}
}

var benchRanges = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("2001:2::/48")}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("xdpgen", flag.ContinueOnError)
	dev := fs.String("dev", "", "interface to send on (required)")
	dmac := fs.String("dmac", "", "destination MAC (required)")
	frame := fs.Int("frame", 64, "RFC 2544 frame size in bytes, FCS included")
	secs := fs.Duration("secs", 5*time.Second, "how long to send (a bare number is seconds)")
	srcIP := fs.String("src-ip", "198.18.0.2", "source IP, in 198.18.0.0/15 or 2001:2::/48")
	dstIP := fs.String("dst-ip", "198.19.0.2", "destination IP, in 198.18.0.0/15 or 2001:2::/48")
	dport := fs.Uint("dport", 7, "UDP destination port")
	rate := fs.Float64("rate", 0, "frames per second; 0 sends as fast as the socket takes them")
	batch := fs.Int("batch", 64, "frames per Send call")
	ring := fs.Int("ring", 2048, "descriptors per ring (and the copy-mode send budget)")
	// A bare number of seconds, as peers.sh passes {secs}.
	for i, a := range args {
		if i > 0 && (args[i-1] == "--secs" || args[i-1] == "-secs") {
			if _, err := time.ParseDuration(a); err != nil {
				args[i] = a + "s"
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dev == "" {
		return errors.New("--dev: not set; name the interface to send on")
	}
	ifi, err := net.InterfaceByName(*dev)
	if err != nil {
		return fmt.Errorf("--dev %s: %w", *dev, err)
	}
	dst, err := net.ParseMAC(*dmac)
	if err != nil {
		return fmt.Errorf("--dmac %q: %w", *dmac, err)
	}
	var ips [2]netip.Addr
	for i, s := range []string{*srcIP, *dstIP} {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("ip %q: %w", s, err)
		}
		if !benchRanges[0].Contains(a.Unmap()) && !benchRanges[1].Contains(a) {
			return fmt.Errorf("ip %v: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 (RFC 6815)", a)
		}
		ips[i] = a
	}
	if *dport > 65535 {
		return fmt.Errorf("--dport %d: must be 1..65535", *dport)
	}
	tpl, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: ifi.HardwareAddr, DstMAC: dst, SrcIP: ips[0], DstIP: ips[1],
		DstPort: uint16(*dport), FrameSize: *frame,
	})
	if err != nil {
		return err
	}
	chunk := 2048
	if *frame > afxdp.MaxFrameSize(chunk) {
		chunk = 4096
	}
	s, err := afxdp.Open(afxdp.Config{Interface: *dev, TX: true, ChunkSize: chunk, RingSize: *ring, Frames: 2 * *ring})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.PrepareTx([]afxdp.TxStream{{ID: 1, Templates: []*framing.Template{tpl}}}); err != nil {
		return err
	}
	res, err := s.Generate(ctx, 0, 1, *rate, *secs, *batch)
	st, _ := s.Stats()
	out := struct {
		afxdp.GenResult
		Frame    int            `json:"frame"`
		Features afxdp.Features `json:"features"`
		Stats    afxdp.Stats    `json:"stats"`
	}{res, *frame, s.Features(), st}
	if jerr := json.NewEncoder(stdout).Encode(out); jerr != nil {
		return jerr
	}
	return err
}
