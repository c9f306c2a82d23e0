package rfc2544

import "time"

// ETA estimates the tester time left in a run as it goes, from the plan's
// segments (EstimateRun): the segments not begun plus the rest of the
// current one. A search's length depends on the DUT, so it is an estimate.
type ETA struct {
	segs      []Segment
	seg       int           // the current segment, -1 before the first
	started   int           // trials started in the current segment
	remaining time.Duration // estimated tester time of the segments not begun
	test      Test          // the running trial's test and size
	size      int
}

// NewETA starts the estimate of a run of p.
func NewETA(p Plan) *ETA {
	e := &ETA{segs: p.EstimateRun(), seg: -1}
	for _, s := range e.segs {
		e.remaining += time.Duration(s.Trials) * s.Each
	}
	return e
}

// TrialStarted counts a trial of test at frameSize, moving on to its
// segment when it is a new one.
func (e *ETA) TrialStarted(test Test, frameSize int) {
	if test != e.test || frameSize != e.size {
		e.test, e.size = test, frameSize
		e.advance(test, frameSize)
	}
	e.started++
}

func (e *ETA) advance(test Test, size int) {
	e.started = 0
	for i := e.seg + 1; i < len(e.segs); i++ {
		if e.segs[i].Test == test && e.segs[i].Size == size {
			for j := e.seg + 1; j <= i; j++ {
				e.remaining -= time.Duration(e.segs[j].Trials) * e.segs[j].Each
			}
			e.seg = i
			return
		}
	}
}

// Left is the estimated tester time left.
func (e *ETA) Left() time.Duration {
	left := e.remaining
	if e.seg >= 0 && e.seg < len(e.segs) {
		s := e.segs[e.seg]
		left += time.Duration(max(s.Trials-e.started, 0)) * s.Each
	}
	return left
}
