package rig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// TestReadCalibrationTransport: a run uses only ceilings measured on its own
// transport; a file written before calibrate took --transport (no
// paths.transport) is the raw transport's; udp and sim take none. Every
// refusal is an input error naming --calibration and the fix.
func TestReadCalibrationTransport(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, pts []trials.CalibrationPoint) string {
		b, err := json.Marshal(pts)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pt := func(size int, transport string) trials.CalibrationPoint {
		return trials.CalibrationPoint{FrameSize: size, OfferedFPS: 1e6, ReceivedFPS: 9e5, CeilingFPS: 9e5, Paths: trials.Paths{Transport: transport}}
	}
	xdp := write("xdp.json", []trials.CalibrationPoint{pt(64, "xdp"), pt(1518, "xdp")})
	raw := write("raw.json", []trials.CalibrationPoint{pt(64, "raw")})
	old := write("old.json", []trials.CalibrationPoint{pt(64, "")})
	mixed := write("mixed.json", []trials.CalibrationPoint{pt(64, "xdp"), pt(512, "raw")})
	for _, tt := range []struct {
		name, path, transport string
		want                  []string // substrings of the error; none for success
	}{
		{"xdp for xdp", xdp, XDP, nil},
		{"raw for raw", raw, Raw, nil},
		{"raw for the default transport", raw, "", nil},
		{"old file for raw", old, Raw, nil},
		{"raw for xdp", raw, XDP, []string{"--calibration " + raw, "64 bytes", "raw transport", "--transport xdp", "rfc2544 calibrate --lab NAME --transport xdp"}},
		{"old file for xdp", old, XDP, []string{"raw transport", "--transport xdp"}},
		{"xdp for raw", xdp, Raw, []string{"xdp transport", "--transport raw"}},
		{"mixed for xdp", mixed, XDP, []string{"512 bytes", "raw transport"}},
		{"udp", xdp, UDP, []string{"--calibration", "raw and xdp transports", "--transport udp"}},
		{"sim", xdp, Sim, []string{"--calibration", "--transport sim"}},
		{"missing file", filepath.Join(dir, "none.json"), XDP, []string{"--calibration", "rfc2544 calibrate --lab NAME --transport xdp --json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := ReadCalibration(tt.path, tt.transport)
			if tt.want == nil {
				if err != nil || len(pts) == 0 {
					t.Fatalf("ReadCalibration = %+v, %v; want the points", pts, err)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q, want %q in it", err, w)
				}
			}
		})
	}
}

// TestOpenNamesTransportFlag: a transport that cannot run on the ports
// (trials.ErrNotSupported, e.g. AF_XDP missing) is refused naming
// --transport; other open errors keep their words.
func TestOpenNamesTransportFlag(t *testing.T) {
	a, err := ParsePort("a", PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.18.1.1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParsePort("b", PortInput{Interface: "eth2", Addr: "198.19.1.2/24", Gateway: "198.19.1.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("no AF_PACKET here: %w", trials.ErrNotSupported), "--transport raw: open the raw engine: no AF_PACKET here"},
		{errors.New("eth1: no such device"), "open the raw engine: eth1: no such device"},
	} {
		_, err := Open(context.Background(), Config{Transport: Raw, Ports: []Port{a, b},
			OpenRaw: func(context.Context, trials.Config) (Engine, error) { return nil, tt.err }})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Open = %v, want %q", err, tt.want)
		}
	}
}
