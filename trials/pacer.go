package trials

import (
	"math"
	"time"
)

// Pacer decides when frames are due. It is a pure function of the time
// elapsed since the first frame and the number of frames sent so far, so the
// transmit loop owns the clock and tests need no sleeping (vegeta's pacer
// shape).
//
// Frame n (counting from 0) is due at SendTime(n): n/RateFPS before Change.At,
// and Change.At + k/Change.RateFPS for the k-th frame due at or after it.
// A zero RateFPS means "as fast as possible": every frame is due at once.
type Pacer struct {
	// RateFPS is the intended rate in frames per second; zero means
	// unlimited (back-to-back).
	RateFPS float64
	// Total is the number of frames to send; zero means no limit.
	Total uint64
	// Change, when set, switches to Change.RateFPS at Change.At.
	Change *RateChange
	// MaxBatch caps the frames returned by one Pace call; zero means 64.
	MaxBatch int
}

// NewDurationPacer returns a pacer for a timed trial: every frame whose send
// time falls before d is planned, so Total is ⌈d·rate⌉ (per rate segment).
func NewDurationPacer(rateFPS float64, d time.Duration, change *RateChange, maxBatch int) Pacer {
	p := Pacer{RateFPS: rateFPS, Change: change, MaxBatch: maxBatch}
	if rateFPS <= 0 {
		return p
	}
	if c := change; c != nil && c.At < d && c.RateFPS > 0 {
		p.Total = framesBefore(c.At, rateFPS) + framesBefore(d-c.At, c.RateFPS)
	} else {
		p.Change = nil
		p.Total = framesBefore(d, rateFPS)
	}
	return p
}

// framesBefore is the number of k ≥ 0 with k/rate < d, i.e. ⌈d·rate⌉.
func framesBefore(d time.Duration, rate float64) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(math.Ceil(d.Seconds()*rate - 1e-9))
}

// firstSegment is the number of frames sent at RateFPS before Change.At.
func (p Pacer) firstSegment() uint64 {
	if p.Change == nil || p.Change.RateFPS <= 0 {
		return math.MaxUint64
	}
	return framesBefore(p.Change.At, p.RateFPS)
}

// SendTime is the intended send time of frame n, as an offset from the
// first frame. It is zero for an unlimited rate.
func (p Pacer) SendTime(n uint64) time.Duration {
	if p.RateFPS <= 0 {
		return 0
	}
	n1 := p.firstSegment()
	if n < n1 {
		return time.Duration(float64(n) / p.RateFPS * 1e9)
	}
	return p.Change.At + time.Duration(float64(n-n1)/p.Change.RateFPS*1e9)
}

// due is the number of frames whose send time is at or before elapsed.
func (p Pacer) due(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		return 0
	}
	n1 := p.firstSegment()
	if p.Change == nil || elapsed < p.Change.At {
		d := uint64(math.Floor(elapsed.Seconds()*p.RateFPS+1e-9)) + 1
		return min(d, n1)
	}
	return n1 + uint64(math.Floor((elapsed-p.Change.At).Seconds()*p.Change.RateFPS+1e-9)) + 1
}

// Pace returns how many frames to send now (n > 0, wait zero), or how long to
// wait before the next frame is due (n zero). When Total frames have been
// sent it returns (0, 0): the caller is done. A sender that fell behind gets
// the whole backlog, up to MaxBatch frames per call.
func (p Pacer) Pace(elapsed time.Duration, sent uint64) (wait time.Duration, n int) {
	if p.Total > 0 && sent >= p.Total {
		return 0, 0
	}
	batch := uint64(p.MaxBatch)
	if batch == 0 {
		batch = 64
	}
	due := uint64(math.MaxUint64)
	if p.RateFPS > 0 {
		due = p.due(elapsed)
	}
	if p.Total > 0 {
		due = min(due, p.Total)
	}
	if due > sent {
		return 0, int(min(due-sent, batch))
	}
	wait = p.SendTime(sent) - elapsed
	if wait <= 0 {
		// Rounding at a segment edge: the frame is due now.
		return 0, 1
	}
	return wait, 0
}

// Done reports whether every planned frame has been sent.
func (p Pacer) Done(sent uint64) bool { return p.Total > 0 && sent >= p.Total }
