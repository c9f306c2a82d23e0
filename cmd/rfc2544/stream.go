package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// Events of the journal's interval lines and of --json-stream (one JSON
// object a line, the iperf3 --json-stream convention: each names its event).
// The interval event is rfc2544.EventInterval, an rfc2544.IntervalRecord
// (also the journal's interval lines).
const (
	eventStart = "start" // the run begins
	eventTrial = "trial" // a trial ended (the journal's trial lines have no event)
	eventEnd   = "end"   // the run ended
)

// startEvent opens a --json-stream: the run's plan and the estimate of its
// tester time.
type startEvent struct {
	Event     string       `json:"event"` // "start"
	Time      time.Time    `json:"time"`
	Tool      string       `json:"tool"`
	Out       string       `json:"out"`
	Resumed   int          `json:"resumed_trials,omitempty"`
	EstimateS float64      `json:"estimate_s"`
	Trials    int          `json:"estimate_trials"`
	Plan      rfc2544.Plan `json:"plan"`
}

// trialEvent is a finished trial on the --json-stream: the journal's trial
// line with its event.
type trialEvent struct {
	Event string `json:"event"` // "trial"
	// FromJournal marks a trial replayed from the journal of a resumed
	// run, not run now.
	FromJournal bool `json:"from_journal,omitempty"`
	rfc2544.TrialRecord
}

// endEvent closes a --json-stream: the results as --json writes them, and
// the run's error if it ended in one.
type endEvent struct {
	Event   string           `json:"event"` // "end"
	Time    time.Time        `json:"time"`
	Error   string           `json:"error,omitempty"`
	Results *rfc2544.Results `json:"results"`
}

// jsonStream writes --json-stream events to stdout, one line each, as they
// happen. A stream that cannot be written is an error of the run (the
// consumer is gone).
type jsonStream struct {
	w   io.Writer
	err error
}

func (s *jsonStream) emit(v any) error {
	if s == nil || s.err != nil {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.err = fmt.Errorf("--json-stream: encode %T: %w", v, err)
		return s.err
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		s.err = fmt.Errorf("--json-stream: write to stdout: %w", err)
		return s.err
	}
	return nil
}
