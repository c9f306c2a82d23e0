package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	)
	helpOn(fs, stdout, `Usage: rfc2544 calibrate --lab NAME [--sizes 64,512,1518] [--duration 2s] [--json]

Sends at full speed from port A to port B of a loop lab (no DUT) and reports,
per frame size, what the generator offered, what the receiver counted and the
tester's ceiling (the lower of the two). The engine marks trials at or above
the ceiling that show loss as tester-limited.

Example:
  rfc2544 lab up --name cal --topology loop
  rfc2544 calibrate --lab cal --sizes 64,512,1518
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
	fsizes, err := rfc2544.ParseFrameSizes(*sizes)
	if err != nil {
		return usagef("calibrate --sizes %s: %w", quoteShort(*sizes), err)
	}
	for _, n := range fsizes {
		if n < 64 || n > 16384 {
			return usagef("calibrate --sizes: %d is not a frame size in bytes from 64 to 16384", n)
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
	pts, err := trials.Calibrate(ctx, trials.Config{A: ports[0].Engine(), B: ports[1].Engine(), TxCPU: st.TesterCPU()}, fsizes, *dur)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
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
		fmt.Fprintf(tw, "\npaths: tx %s, qdisc bypass %v, rx %s, timestamps %s\t\t\t\t\t\t\n", pts[0].Paths.TX,
			pts[0].Paths.QdiscBypass, pts[0].Paths.RX, pts[0].Paths.Timestamps)
	}
	return tw.Flush()
}
