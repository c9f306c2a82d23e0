//go:build linux

package trials

import (
	"errors"
	"math"
	"sync"
	"time"
)

// trialTx is the transmit side of a trial: the raw engine's transmitter or
// the UDP engine's. run sends the side's streams until their pacers are done,
// the hard stop passes or the trial is stopped.
type trialTx interface{ run() error }

// runTraffic runs one trial's transmitters (a nil entry is a side that does
// not send) to their end, then stores the settle deadline (the streams' last
// send time plus settle, wall-clock ns) in the receivers and sleeps until the
// deadline plus LateGrace, to see late frames. It is not cut short by a
// cancelled context: frames in flight are counted. It returns the
// transmitters' errors joined.
func runTraffic(txs [2]trialTx, states []*streamState, rx [2]*rxTrial, settle time.Duration) error {
	var errs [2]error
	var wg sync.WaitGroup
	for i, t := range txs {
		if t != nil {
			wg.Go(func() { errs[i] = t.run() })
		}
	}
	wg.Wait()
	var lastNs int64
	for _, s := range states {
		lastNs = max(lastNs, s.lastNs, s.drainNs) // the settle wait starts when the last frame left
	}
	if lastNs == 0 {
		lastNs = time.Now().UnixNano()
	}
	deadline := lastNs + int64(settle)
	for _, t := range rx {
		t.deadlineNs.Store(deadline)
	}
	time.Sleep(time.Until(time.Unix(0, deadline).Add(LateGrace)))
	return errors.Join(errs[:]...)
}

// due is one transmit loop step of stream s at elapsed time el of the trial
// (ns, the wall clock then in Unix ns): n frames are due now, or none and
// wait is the time until the next one. ok is false once the pacer is done
// (n and wait are then 0 and must be ignored). A stall's backlog is spread
// (Pacer.Step). When n > 0 it records the first send time, how far behind
// schedule the batch goes out, the catch-up's peak overspeed and end burst,
// and the tag point (Spec.TagAfter, tagAfter > 0). It does not allocate.
func (s *streamState) due(el time.Duration, ns int64, tagAfter time.Duration) (n int, wait time.Duration, ok bool) {
	if s.pacer.Done(s.queued) {
		return 0, time.Duration(math.MaxInt64), false
	}
	prev := s.catch
	wait, n, s.catch = s.pacer.Step(el, s.queued, s.catch)
	s.peakOverspeed = max(s.peakOverspeed, s.catch.Overspeed)
	if n == 0 {
		return 0, wait, true
	}
	if prev.Overspeed > 0 && s.catch.Overspeed == 0 && s.pacer.Total > 0 && s.pacer.due(el) >= s.pacer.Total &&
		s.pacer.Total-s.queued > 2 {
		// The schedule ended before the spread caught up (a spread that
		// did leaves the last 1+o ≤ 2 frames).
		s.burst = max(s.burst, s.pacer.Total-s.queued)
	}
	if s.firstNs == 0 {
		s.firstNs = ns
	} else if s.pacer.RateFPS > 0 {
		s.maxLag = max(s.maxLag, el-s.pacer.SendTime(s.queued))
	}
	if tagAfter > 0 && el >= tagAfter && s.tagSeq.Load() == math.MaxUint64 {
		s.tagSeq.Store(s.queued)
	}
	return n, 0, true
}
