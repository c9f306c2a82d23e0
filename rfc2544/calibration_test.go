package rfc2544

import (
	"strings"
	"testing"
)

func TestParseCalibration(t *testing.T) {
	pts, err := ParseCalibration([]byte(`[{"frame_size":64,"offered_fps":900000,"received_fps":880000,"kernel_drops":3,"ceiling_fps":880000,"paths":{"transport":"raw","tx":"tx_ring"}}]`))
	if err != nil || len(pts) != 1 || pts[0].FrameSize != 64 || pts[0].CeilingFPS != 880000 || pts[0].KernelDrops != 3 || pts[0].Paths.TX != "tx_ring" {
		t.Fatalf("ParseCalibration(calibrate's output) = %+v, %v", pts, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`[]`, "no calibration points"},
		{`{"plan": 1}`, "calibrate --json"},
		{`[{"frame_size":64,"ceiling":1}]`, `unknown field "ceiling"`},
		{`[{"frame_size":64,"ceiling_fps":0}]`, "frame size 64 has ceiling 0 fps"},
		{`[{"frame_size":0,"ceiling_fps":5}]`, "want positive sizes"},
	} {
		if _, err := ParseCalibration([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCalibration(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}
