package rig

import (
	"errors"
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
// 'rfc2544 calibrate --json'.
func ReadCalibration(path string) ([]trials.CalibrationPoint, error) {
	b, err := fileio.ReadBounded(path, maxCalibrationBytes)
	if err != nil {
		return nil, inputf("--calibration %s: %v; write one with 'rfc2544 calibrate --lab NAME --json > %s'", path, err, path)
	}
	pts, err := rfc2544.ParseCalibration(b)
	if err != nil {
		return nil, inputf("--calibration %s: %w", path, err)
	}
	return pts, nil
}
