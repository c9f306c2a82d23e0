package trials

import (
	"fmt"
	"time"
)

// checkCalibration refuses a calibration that cannot run, before any
// traffic: no sizes, or a duration that is not positive.
func checkCalibration(sizes []int, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("calibrate duration %v: must be positive, e.g. 2s", d)
	}
	if len(sizes) == 0 {
		return fmt.Errorf("calibrate: no frame sizes; give at least one, e.g. 64")
	}
	return nil
}
