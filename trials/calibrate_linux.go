//go:build linux

package trials

import (
	"context"
	"fmt"
	"math"
	"time"
)

// calibrate measures tr's ceiling per frame size: for each size port A
// sends at full speed for d (an unpaced timed trial) and port B counts. The
// ceiling is the lower of the offered rate (the generator's ceiling) and
// the received rate over the same send window (the receiver's).
func calibrate(ctx context.Context, tr transport, sizes []int, d time.Duration) ([]CalibrationPoint, error) {
	var out []CalibrationPoint
	for _, f := range sizes {
		spec := Spec{FrameSize: f, Streams: []Stream{{ID: 1, Direction: AtoB}}, Duration: d, Settle: 200 * time.Millisecond}
		r, err := runTransport(ctx, tr, spec, true)
		if err != nil {
			return out, fmt.Errorf("calibrate %d bytes: %w", f, err)
		}
		out = append(out, calibrationPoint(f, r))
	}
	return out, nil
}

// calibrationPoint is the ceiling a full-speed trial of frame size f shows.
func calibrationPoint(f int, r Result) CalibrationPoint {
	s := r.Streams[0]
	pt := CalibrationPoint{FrameSize: f, OfferedFPS: s.OfferedFPS, KernelDrops: s.KernelDrops, Paths: r.Paths}
	if s.TxSeconds > 0 && s.Received > 1 {
		// Frames received over the same send window.
		pt.ReceivedFPS = float64(s.Received-1) / s.TxSeconds
	}
	pt.CeilingFPS = math.Min(pt.OfferedFPS, pt.ReceivedFPS)
	return pt
}
