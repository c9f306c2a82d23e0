package rfc2544

import "github.com/rfc2544/rfc2544/trials"

// EventInterval is the event of a journal's interval lines.
const EventInterval = "interval"

// IntervalRecord is one trials.Interval of a running trial with the trial
// it belongs to: a journal line (version 2) written before the trial's
// TrialRecord, and a --json-stream event. Event is EventInterval. A trial
// interrupted mid-way leaves its intervals and no TrialRecord.
type IntervalRecord struct {
	Event     string `json:"event"`
	Test      Test   `json:"test"`
	FrameSize int    `json:"frame_size"`
	Step      int    `json:"step"`
	trials.Interval
}
