package rig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// maxCalibrationBytes bounds a calibration file: real ones are a few
// kilobytes.
const maxCalibrationBytes = 1 << 20

// ReadResume reads the journal of the run in dir (--resume) to continue it
// with the command verb it was started with.
func ReadResume(dir, verb string) (*rfc2544.JournalContents, error) {
	jc, err := rfc2544.ReadJournal(filepath.Join(dir, JournalName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, inputf("--resume %s: no %s there; give the --out folder of the run to continue", dir, JournalName)
	}
	if err != nil {
		return nil, err
	}
	if jc.Header.Verb != verb {
		return nil, inputf("--resume %s: that run was 'rfc2544 %s'; resume it with 'rfc2544 %s --resume %s'", dir, jc.Header.Verb, jc.Header.Verb, dir)
	}
	return jc, nil
}

// ReadCalibration reads the tester's ceilings (--calibration), the output of
// 'rfc2544 calibrate --json', for a run on transport (Raw or XDP): the
// points must have been measured on that transport (CalibrationFits).
func ReadCalibration(path, transport string) ([]trials.CalibrationPoint, error) {
	if err := CalibrationFits(nil, transport); err != nil {
		return nil, inputf("--calibration %s: %w", path, err)
	}
	b, err := fileio.ReadBounded(path, maxCalibrationBytes)
	if err != nil {
		return nil, inputf("--calibration %s: %v; write one with 'rfc2544 calibrate --lab NAME --transport %s --json > %s'", path, err, transportName(transport), path)
	}
	pts, err := rfc2544.ParseCalibration(b)
	if err != nil {
		return nil, inputf("--calibration %s: %w", path, err)
	}
	if err := CalibrationFits(pts, transport); err != nil {
		return nil, inputf("--calibration %s: %w", path, err)
	}
	return pts, nil
}

// CalibrationTransport is the transport the --calibration file at path was
// measured on, for a run on transport: with Auto the file's own (Choose
// takes it), else transport as given (ReadCalibration checks the file).
func CalibrationTransport(path, transport string) (string, error) {
	if transport != Auto {
		return transport, nil
	}
	b, err := fileio.ReadBounded(path, maxCalibrationBytes)
	if err != nil {
		return "", inputf("--calibration %s: %v; write one with 'rfc2544 calibrate --lab NAME --transport raw --json > %s'", path, err, path)
	}
	pts, err := rfc2544.ParseCalibration(b)
	if err != nil {
		return "", inputf("--calibration %s: %w", path, err)
	}
	if len(pts) == 0 {
		return Raw, nil
	}
	return transportName(pts[0].Paths.Transport), nil
}

// CalibrationFits says whether ceilings measured by 'rfc2544 calibrate'
// (each point's Paths.Transport; "" in files written before calibrate took
// --transport, which measured the raw transport) apply to a run on
// transport: a raw generator's ceiling says nothing of the xdp generator's.
func CalibrationFits(pts []trials.CalibrationPoint, transport string) error {
	transport = transportName(transport)
	if transport != Raw && transport != XDP {
		return fmt.Errorf("tester ceilings apply to the raw and xdp transports, not --transport %s; drop --calibration", transport)
	}
	for _, p := range pts {
		if m := transportName(p.Paths.Transport); m != transport {
			return fmt.Errorf("the ceiling at %d bytes was measured on the %s transport and this run uses --transport %s; measure its own with 'rfc2544 calibrate --lab NAME --transport %s --json'",
				p.FrameSize, m, transport, transport)
		}
	}
	return nil
}

// transportName is t with "" read as Raw.
func transportName(t string) string {
	if t == "" {
		return Raw
	}
	return t
}
