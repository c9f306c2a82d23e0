package rig

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// TestCalibrateBadInput: every bad setting is an *InputError naming
// calibrate's flag, before any lab is looked at.
func TestCalibrateBadInput(t *testing.T) {
	good := CalibrateInput{Lab: "nosuchlab-x1", Transport: Raw, Sizes: "64,1518", Duration: time.Second}
	for _, tt := range []struct {
		name string
		edit func(*CalibrateInput)
		want string
	}{
		{"no lab", func(in *CalibrateInput) { in.Lab = "" }, "calibrate --lab: required"},
		{"zero duration", func(in *CalibrateInput) { in.Duration = 0 }, "calibrate --duration 0s: want a positive duration"},
		{"long duration", func(in *CalibrateInput) { in.Duration = time.Hour }, "up to 5m"},
		{"udp", func(in *CalibrateInput) { in.Transport = UDP }, `calibrate --transport "udp": want raw or xdp`},
		{"bad sizes", func(in *CalibrateInput) { in.Sizes = "64,x" }, "calibrate --sizes "},
		{"small size", func(in *CalibrateInput) { in.Sizes = "32" }, "32 is not a frame size in bytes from 64 to 16384"},
		{"xdp jumbo", func(in *CalibrateInput) { in.Transport, in.Sizes = XDP, "64,9000" }, "9000 bytes with --transport xdp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := good
			tt.edit(&in)
			_, err := Calibrate(context.Background(), in, nil)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want an *InputError with %q", err, tt.want)
			}
		})
	}
	// Good input reaches the lab, which is not up.
	if _, err := Calibrate(context.Background(), good, nil); err == nil || !strings.Contains(err.Error(), "nosuchlab-x1") {
		t.Errorf("Calibrate on a lab that is not up: %v", err)
	}
}

// TestWriteCalibration: the file WriteCalibration writes is the one
// ReadCalibration reads; the table shows each size and the paths.
func TestWriteCalibration(t *testing.T) {
	pts := []trials.CalibrationPoint{
		{FrameSize: 64, OfferedFPS: 1e6, ReceivedFPS: 9e5, KernelDrops: 7, CeilingFPS: 9e5, Paths: trials.Paths{Transport: XDP, TX: "xdp", XDP: "native, copy"}},
		{FrameSize: 1518, OfferedFPS: 8e4, ReceivedFPS: 8e4, CeilingFPS: 8e4, Paths: trials.Paths{Transport: XDP, TX: "xdp"}},
	}
	path := filepath.Join(t.TempDir(), "cal.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCalibration(f, pts); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := ReadCalibration(path, XDP)
	if err != nil || len(got) != 2 || got[0] != pts[0] || got[1] != pts[1] {
		t.Fatalf("ReadCalibration = %+v, %v; want %+v", got, err, pts)
	}
	var b strings.Builder
	if err := WriteCalibrationTable(&b, pts, 1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ceiling_Mbit/s_L2", "460.8", "971.5", "paths: transport xdp, tx xdp", ", xdp native, copy"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
}
