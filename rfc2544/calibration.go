package rfc2544

import "fmt"

// ParseCalibration reads a calibration table, the JSON 'rfc2544 calibrate
// --json' writes (trials.Calibrate's points), strictly: unknown fields are
// refused, and every point needs a positive frame size and ceiling. Feed
// the points to trials.CeilingMap for Config.CeilingFPS, and to
// TesterInfo.Calibration for the results.
func ParseCalibration(b []byte) ([]CalibrationPoint, error) {
	var pts []CalibrationPoint
	if err := strictUnmarshal(b, &pts); err != nil {
		return nil, fmt.Errorf("not the JSON of 'rfc2544 calibrate --json': %w", err)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("no calibration points")
	}
	for _, p := range pts {
		if p.FrameSize <= 0 || !(p.CeilingFPS > 0) {
			return nil, fmt.Errorf("frame size %d has ceiling %g fps; want positive sizes and ceilings (run 'rfc2544 calibrate' again)", p.FrameSize, p.CeilingFPS)
		}
	}
	return pts, nil
}
