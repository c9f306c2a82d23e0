package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/rfc2544/rfc2544/rig"
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
	pts, err := rig.Calibrate(ctx, rig.CalibrateInput{Lab: *labName, Transport: *tport, Sizes: *sizes, Duration: *dur, Queues: *queues}, stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		return rig.WriteCalibration(stdout, pts)
	}
	return rig.WriteCalibrationTable(stdout, pts, *queues)
}
