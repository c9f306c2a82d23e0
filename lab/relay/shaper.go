package relay

// shaper is the relay's rate limit of one direction: a link of a given
// rate that sends frames one after the other, and a queue of at most limit
// frames waiting for it. It is pure (the caller passes the clock) and used
// by one goroutine.
type shaper struct {
	free int64   // ns (relay clock) when the link has sent the last frame admitted
	done []int64 // departure times of the frames admitted and not yet sent, oldest first
}

// admit schedules a frame of n bytes arriving at now (ns) on a link of rate
// bit/s with a queue of limit frames: it returns the time the frame has
// left the link (its last bit sent), or ok false when limit frames are
// already waiting (the frame is dropped, as a tail-drop queue does).
func (s *shaper) admit(now int64, n int, rate float64, limit int) (departs int64, ok bool) {
	k := 0
	for k < len(s.done) && s.done[k] <= now {
		k++
	}
	if k > 0 {
		s.done = append(s.done[:0], s.done[k:]...)
	}
	// The frame being sent counts as waiting too, as in tbf's queue.
	if len(s.done) >= max(limit, 1) {
		return 0, false
	}
	start := max(now, s.free)
	s.free = start + int64(float64(n)*8e9/rate)
	s.done = append(s.done, s.free)
	return s.free, true
}
