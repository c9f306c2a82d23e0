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
//
// Catch-up. A sender that falls behind by more than CatchUpAfter (its host
// did not schedule it for a while) does not send the backlog back to back:
// Step spreads it over the rest of the schedule, sending 1+o frames per
// scheduled frame, with o the smallest overspeed that catches up by the last
// frame, at most MaxOverspeed. Whatever that cannot absorb is due at the
// last frame's time. The average rate over the trial is unchanged; the DUT
// sees at most (1+MaxOverspeed) × the rate for a while instead of a burst.
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
	// MaxOverspeed bounds the catch-up rate after a stall, as a fraction
	// above the scheduled rate (0.05: at most 5 % faster); zero means no
	// spreading: a sender that fell behind gets its whole backlog at once.
	MaxOverspeed float64
	// CatchUpAfter is how far behind schedule the sender may fall before
	// its backlog is spread rather than sent at once (smaller lags are the
	// ordinary wake-up error of a sleeping thread).
	CatchUpAfter time.Duration
}

// Catch-up defaults of NewDurationPacer: a stall of 10 ms in a 1 s trial is
// absorbed within 200 ms at worst, and wake-up errors under 0.5 ms (a few
// frames at the rates a small DUT queue holds) go out at once.
const (
	DefaultMaxOverspeed = 0.05
	DefaultCatchUpAfter = 500 * time.Microsecond
)

// CatchUp is a sender's catch-up after a stall, the state Step threads
// through the transmit loop; the zero value means on schedule.
type CatchUp struct {
	// Sent and Due are the frames sent and due when the catch-up began.
	Sent, Due uint64
	// Overspeed is o: 1+o frames are allowed per scheduled frame from Due
	// on. Zero means no catch-up is under way.
	Overspeed float64
}

// NewDurationPacer returns a pacer for a timed trial: every frame whose send
// time falls before d is planned, so Total is ⌈d·rate⌉ (per rate segment).
func NewDurationPacer(rateFPS float64, d time.Duration, change *RateChange, maxBatch int) Pacer {
	p := Pacer{RateFPS: rateFPS, Change: change, MaxBatch: maxBatch,
		MaxOverspeed: DefaultMaxOverspeed, CatchUpAfter: DefaultCatchUpAfter}
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
// the whole backlog, up to MaxBatch frames per call (Pace ignores
// MaxOverspeed; Step spreads the backlog).
func (p Pacer) Pace(elapsed time.Duration, sent uint64) (wait time.Duration, n int) {
	p.MaxOverspeed = 0
	wait, n, _ = p.Step(elapsed, sent, CatchUp{})
	return wait, n
}

// Step is Pace with the catch-up rule (see Pacer): c is the state the
// previous call returned (zero at the start), next the state to pass to the
// following call. It is pure and does not allocate.
func (p Pacer) Step(elapsed time.Duration, sent uint64, c CatchUp) (wait time.Duration, n int, next CatchUp) {
	if p.Total > 0 && sent >= p.Total {
		return 0, 0, CatchUp{}
	}
	batch := uint64(p.MaxBatch)
	if batch == 0 {
		batch = 64
	}
	if p.RateFPS <= 0 {
		due := uint64(math.MaxUint64)
		if p.Total > 0 {
			due = p.Total
		}
		return 0, int(min(due-sent, batch)), CatchUp{}
	}
	due := p.due(elapsed)
	if p.Total > 0 {
		due = min(due, p.Total)
	}
	end := p.Total > 0 && due >= p.Total // the last frame is due: nothing left to spread over
	if p.MaxOverspeed <= 0 || end {
		c = CatchUp{}
	}
	allowed := due
	if c.Overspeed > 0 {
		if line := c.allowed(due); line < due {
			allowed = line
		} else {
			c = CatchUp{} // caught up
		}
	}
	if p.MaxOverspeed > 0 && !end && allowed > sent+1 && elapsed-p.allowedAt(sent, c) > p.CatchUpAfter {
		// Fell behind (again): spread the backlog over the frames still to
		// be scheduled.
		o := p.MaxOverspeed
		if p.Total > due {
			o = min(o, float64(due-sent)/float64(p.Total-due))
		}
		c = CatchUp{Sent: sent, Due: due, Overspeed: o}
		allowed = sent
	}
	if allowed > sent {
		return 0, int(min(allowed-sent, batch)), c
	}
	wait = p.allowedAt(sent, c) - elapsed
	if wait <= 0 {
		// Rounding at a segment edge: the frame is due now.
		return 0, 1, c
	}
	return wait, 0, c
}

// allowed is how many frames the catch-up c allows once due frames are due:
// c.Sent + ⌊(due − c.Due)·(1+o)⌋.
func (c CatchUp) allowed(due uint64) uint64 {
	if due <= c.Due {
		return c.Sent
	}
	return c.Sent + uint64(math.Floor(float64(due-c.Due)*(1+c.Overspeed)+1e-9))
}

// allowedAt is when frame n may go out: its send time, or during a catch-up
// the send time of the scheduled frame that allows it (and the last frame's
// time at the latest).
func (p Pacer) allowedAt(n uint64, c CatchUp) time.Duration {
	if c.Overspeed <= 0 || n < c.Sent {
		return p.SendTime(n)
	}
	// The least due with c.allowed(due) > n.
	k := c.Due + uint64(math.Ceil(float64(n+1-c.Sent)/(1+c.Overspeed)-1e-9))
	if p.Total > 0 {
		k = min(k, p.Total)
	}
	return p.SendTime(max(k-1, n))
}

// Done reports whether every planned frame has been sent.
func (p Pacer) Done(sent uint64) bool { return p.Total > 0 && sent >= p.Total }
