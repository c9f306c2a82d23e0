package rfc2544

import "time"

// Events of a run's stream (the rfc2544 command's --json-stream: one JSON
// object a line, the iperf3 --json-stream convention), each naming itself
// in Event: a StartEvent, then IntervalRecords and TrialEvents as the
// trials run, an EndEvent last.
const (
	EventStart = "start" // the run begins
	EventTrial = "trial" // a trial ended (the journal's trial lines have no event)
	EventEnd   = "end"   // the run ended
)

// StartEvent opens a stream: the run's plan and the estimate of its tester
// time.
type StartEvent struct {
	Event     string    `json:"event"` // EventStart
	Time      time.Time `json:"time"`
	Tool      string    `json:"tool"`
	Out       string    `json:"out"`
	Resumed   int       `json:"resumed_trials,omitempty"`
	EstimateS float64   `json:"estimate_s"`
	Trials    int       `json:"estimate_trials"`
	Plan      Plan      `json:"plan"`
	// Transport is the transport that runs the trials and TransportWhy how
	// it was chosen (TesterInfo's).
	Transport    string `json:"transport,omitempty"`
	TransportWhy string `json:"transport_why,omitempty"`
}

// TrialEvent is a finished trial on the stream: the journal's trial line
// with its event.
type TrialEvent struct {
	Event string `json:"event"` // EventTrial
	// FromJournal marks a trial replayed from the journal of a resumed
	// run, not run now.
	FromJournal bool `json:"from_journal,omitempty"`
	TrialRecord
}

// EndEvent closes a stream: the results, and the run's error if it ended
// in one.
type EndEvent struct {
	Event   string    `json:"event"` // EventEnd
	Time    time.Time `json:"time"`
	Error   string    `json:"error,omitempty"`
	Results *Results  `json:"results"`
}
