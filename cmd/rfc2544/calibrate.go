package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	var (
		labName = fs.String("lab", "", "name of a lab built with 'rfc2544 lab up --topology loop' (required)")
		sizes   = fs.String("sizes", "64,128,256,512,1024,1280,1518", "frame sizes in bytes, comma-separated")
		dur     = fs.Duration("duration", 2*time.Second, "full-speed send time per frame size")
		asJSON  = fs.Bool("json", false, "print the calibration points as JSON")
		queues  = fs.Int("queues", 1, "xdp: queues per port (`N`), one sending thread each; the lab's veths need N queues")
		tport   = fs.String("transport", transportRaw, "the transport whose ceilings to measure: raw (AF_PACKET) or xdp (AF_XDP); a run uses ceilings of its own --transport")
	)
	helpOn(fs, stdout, `Usage: rfc2544 calibrate --lab NAME [--transport raw|xdp [--queues N]] [--sizes 64,512,1518] [--duration 2s] [--json]

Sends at full speed from port A to port B of a loop lab (no DUT) and reports,
per frame size, what the generator offered, what the receiver counted and the
tester's ceiling (the lower of the two). The engine marks trials at or above
the ceiling that show loss as tester-limited. Each transport has its own
ceilings: give a run the file measured with its --transport.

Example:
  rfc2544 lab up --name cal --topology loop
  rfc2544 calibrate --lab cal --sizes 64,512,1518
  rfc2544 calibrate --lab cal --transport xdp --json > xdp-cal.json
  rfc2544 run --lab --transport xdp --calibration xdp-cal.json
`)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil
		}
		return usagef("calibrate: %s", flagError(err))
	}
	if fs.NArg() > 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
	}
	if *labName == "" {
		return usagef("calibrate --lab: required: build a loop lab with 'rfc2544 lab up --name cal --topology loop' and pass --lab cal")
	}
	if *dur <= 0 || *dur > 5*time.Minute {
		return usagef("calibrate --duration %v: want a positive duration up to 5m, e.g. 2s", *dur)
	}
	calibrate := trials.Calibrate
	switch *tport {
	case transportRaw:
	case transportXDP:
		calibrate = trials.CalibrateXDP
	default:
		return usagef("calibrate --transport %s: want raw or xdp", quoteShort(*tport))
	}
	if err := rig.CheckQueues(*queues, *tport, runtime.NumCPU()); err != nil {
		return usagef("calibrate %w", err)
	}
	fsizes, err := rfc2544.ParseFrameSizes(*sizes)
	if err != nil {
		return usagef("calibrate --sizes %s: %w", quoteShort(*sizes), err)
	}
	for _, n := range fsizes {
		if n < 64 || n > 16384 {
			return usagef("calibrate --sizes: %d is not a frame size in bytes from 64 to 16384", n)
		}
	}
	if *tport == transportXDP {
		if m := afxdp.MaxFrameSize(afxdp.DefaultChunkSize); slices.Max(fsizes) > m {
			return usagef("calibrate --sizes: %d bytes with --transport xdp: the xdp transport carries frames up to %d bytes; leave the larger sizes out or use --transport raw", slices.Max(fsizes), m)
		}
	}
	st, err := lab.Load(*labName)
	if err != nil {
		return err
	}
	if st.Topology != lab.TopologyLoop {
		fmt.Fprintf(stderr, "rfc2544: warning: lab %q is a %v topology; a ceiling measured through a DUT includes the DUT\n", st.Name, st.Topology)
	}
	ports := rig.LabPorts(st)
	pts, err := calibrate(ctx, trials.Config{A: ports[0].Engine(), B: ports[1].Engine(), TxCPU: st.TesterCPU(), Queues: *queues}, fsizes, *dur)
	if errors.Is(err, trials.ErrNotSupported) {
		return fmt.Errorf("calibrate --transport %s on lab %s: %w", *tport, st.Name, err)
	}
	if err != nil {
		return fmt.Errorf("calibrate --transport %s: %w", *tport, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(pts)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "frame_bytes\toffered_fps\treceived_fps\tkernel_drops\tceiling_fps\tceiling_Mbit/s_L2\t")
	for _, p := range pts {
		fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%d\t%.0f\t%.1f\t\n", p.FrameSize, p.OfferedFPS, p.ReceivedFPS, p.KernelDrops,
			p.CeilingFPS, p.CeilingFPS*float64(p.FrameSize)*8/1e6)
	}
	if len(pts) > 0 {
		xdp := ""
		if pts[0].Paths.XDP != "" {
			xdp = ", xdp " + pts[0].Paths.XDP
		}
		fmt.Fprintf(tw, "\npaths: transport %s, tx %s, qdisc bypass %v, rx %s, timestamps %s%s\t\t\t\t\t\t\n", pts[0].Paths.Transport, pts[0].Paths.TX,
			pts[0].Paths.QdiscBypass, pts[0].Paths.RX, pts[0].Paths.Timestamps, xdp)
	}
	if *tport == transportXDP {
		fmt.Fprintf(tw, "\nqueues a port needs at line rate (the ceiling ÷ %d queue(s) per queue, scaling assumed linear):\t\t\t\t\t\t\n", *queues)
		for _, l := range trials.QueueArithmetic(pts, *queues, []float64{10e9, 25e9}) {
			fmt.Fprintf(tw, "%s\t\t\t\t\t\t\n", l)
		}
	}
	return tw.Flush()
}
