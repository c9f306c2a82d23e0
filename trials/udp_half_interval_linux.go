//go:build linux

package trials

import "time"

// halfIntervals reports the intervals of a two-host trial from the halves
// running on this host (Spec.OnInterval, every IntervalPeriod): what its
// send half sent and its receive half received, marked Partial, then a
// final interval with the trial's totals from both hosts.
type halfIntervals struct {
	s     *sampler
	tx    *udpSend
	rx    *udpReceive
	ended bool
}

// startHalfIntervals starts reporting the intervals of the trial whose
// traffic started at start, from this host's send half tx and receive
// half rx (either may be nil; rx counts only if it was started with this
// spec's OnInterval set). It returns nil, which does nothing, when spec
// has no OnInterval.
func startHalfIntervals(spec Spec, start time.Time, tx *udpSend, rx *udpReceive) *halfIntervals {
	if spec.OnInterval == nil {
		return nil
	}
	var states []*streamState
	if tx != nil {
		for _, s := range tx.streams {
			states = append(states, s.st)
		}
	}
	var rxs [2]*rxTrial
	if rx != nil {
		rxs[0] = rx.t
	}
	return &halfIntervals{s: startSamplerOf(spec, start, states, rxs, true), tx: tx, rx: rx}
}

// Finish stops the periodic intervals and reports the final one: res is
// the trial's result, both hosts' counts merged, so the intervals add up
// to its streams' Sent and Received.
func (h *halfIntervals) Finish(res Result) {
	if h == nil || h.ended {
		return
	}
	h.ended = true
	s := h.s
	close(s.stop)
	<-s.done
	var sent, received uint64
	for _, r := range res.Streams {
		sent += r.Sent
		received += r.Received
	}
	var rxs [2]*rxTrial
	if h.rx != nil {
		rxs[0] = h.rx.t
	}
	c := takeAll(rxs) // the latency of what arrived here since the last interval
	c.received = 0
	if received > s.b.received {
		c.received = received - s.b.received
	}
	end := max(time.Since(s.start), s.b.lastEnd)
	s.spec.OnInterval(s.b.next(end, sent, c, true))
}

// Stop stops the periodic intervals without a final one (a trial that
// failed); after Finish it does nothing. Finish and Stop are called from
// the trial's goroutine.
func (h *halfIntervals) Stop() {
	if h == nil || h.ended {
		return
	}
	h.ended = true
	close(h.s.stop)
	<-h.s.done
}
