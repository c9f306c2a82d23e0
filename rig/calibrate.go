package rig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// CalibrateInput is a measurement of the tester's ceilings as 'rfc2544
// calibrate' takes it.
type CalibrateInput struct {
	Lab       string        // --lab: a lab built with --topology loop
	Transport string        // --transport: Raw or XDP
	Sizes     string        // --sizes: frame sizes, comma-separated
	Duration  time.Duration // --duration: full-speed send time per size
	Queues    int           // --queues: xdp queues per port (0 or 1: one)
}

// sizes checks in and returns its frame sizes: every error is an
// *InputError naming calibrate's flag, found before anything is sent.
func (in CalibrateInput) sizes() ([]int, error) {
	if in.Lab == "" {
		return nil, inputf("calibrate --lab: required: build a loop lab with 'rfc2544 lab up --name cal --topology loop' and pass --lab cal")
	}
	if in.Duration <= 0 || in.Duration > 5*time.Minute {
		return nil, inputf("calibrate --duration %v: want a positive duration up to 5m, e.g. 2s", in.Duration)
	}
	if in.Transport != Raw && in.Transport != XDP {
		return nil, inputf("calibrate --transport %s: want raw or xdp", quote(in.Transport))
	}
	if err := CheckQueues(max(in.Queues, 1), in.Transport, runtime.NumCPU()); err != nil {
		return nil, inputf("calibrate %w", err)
	}
	sizes, err := rfc2544.ParseFrameSizes(in.Sizes)
	if err != nil {
		return nil, inputf("calibrate --sizes %s: %w", quote(in.Sizes), err)
	}
	for _, n := range sizes {
		if n < 64 || n > 16384 {
			return nil, inputf("calibrate --sizes: %d is not a frame size in bytes from 64 to 16384", n)
		}
	}
	if in.Transport == XDP {
		if m := afxdp.MaxFrameSize(afxdp.DefaultChunkSize); slices.Max(sizes) > m {
			return nil, inputf("calibrate --sizes: %d bytes with --transport xdp: the xdp transport carries frames up to %d bytes; leave the larger sizes out or use --transport raw", slices.Max(sizes), m)
		}
	}
	return sizes, nil
}

// Calibrate measures the tester's ceilings on the transport: full speed
// from port A to port B of the lab, per frame size (trials.Calibrate or
// trials.CalibrateXDP). A lab that is not a loop is measured with a
// warning on log: its ceilings include the DUT.
func Calibrate(ctx context.Context, in CalibrateInput, log io.Writer) ([]trials.CalibrationPoint, error) {
	sizes, err := in.sizes()
	if err != nil {
		return nil, err
	}
	calibrate := trials.Calibrate
	if in.Transport == XDP {
		calibrate = trials.CalibrateXDP
	}
	st, err := lab.Load(in.Lab)
	if err != nil {
		return nil, err
	}
	if st.Topology != lab.TopologyLoop {
		fmt.Fprintf(log, "rfc2544: warning: lab %q is a %v topology; a ceiling measured through a DUT includes the DUT\n", st.Name, st.Topology)
	}
	ports := LabPorts(st)
	pts, err := calibrate(ctx, trials.Config{A: ports[0].Engine(), B: ports[1].Engine(), TxCPU: st.TesterCPU(), Queues: max(in.Queues, 1)}, sizes, in.Duration)
	if errors.Is(err, trials.ErrNotSupported) {
		return nil, fmt.Errorf("calibrate --transport %s on lab %s: %w", in.Transport, st.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("calibrate --transport %s: %w", in.Transport, err)
	}
	return pts, nil
}

// WriteCalibration writes the points as the calibration file that
// ReadCalibration reads (--calibration).
func WriteCalibration(w io.Writer, pts []trials.CalibrationPoint) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(pts)
}

// WriteCalibrationTable writes the points as a table: per frame size what
// the generator offered, what the receiver counted and the ceiling, then
// the kernel paths measured.
func WriteCalibrationTable(w io.Writer, pts []trials.CalibrationPoint, queues int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
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
		if pts[0].Paths.Transport == XDP {
			queues = max(queues, 1)
			fmt.Fprintf(tw, "\nqueues a port needs at line rate (the ceiling ÷ %d queue(s) per queue, scaling assumed linear):\t\t\t\t\t\t\n", queues)
			for _, l := range trials.QueueArithmetic(pts, queues, []float64{10e9, 25e9}) {
				fmt.Fprintf(tw, "%s\t\t\t\t\t\t\n", l)
			}
		}
	}
	return tw.Flush()
}
