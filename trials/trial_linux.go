//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// transport is what a trial needs from one transport's two ports (0 is A, 1
// is B); the trial itself is runTransport's, written once. A transport opens its
// ports (at Open), readies each stream's frames, sends paced batches
// (batchSender under paceLoop), receives frames with their timestamps into
// an rxTrial, and reports its counters. It runs one trial at a time:
// per-trial state lives in the transport between prepare and release.
type transport interface {
	// engine is the state kept between trials (lock, run id, closed).
	engine() *engineState
	// rules are the limits every trial obeys.
	rules() trialRules
	// prepare refuses, before traffic, a trial the ports cannot carry (IP
	// family, frame size against the MTU), and resets per-trial state.
	prepare(spec Spec) error
	// portName names port i in errors ("port A", "udp port A").
	portName(i int) string
	// learn runs learning before the streams are readied (frames that
	// resolve the DUT's addresses, then Spec.Learning).
	learn(ctx context.Context, spec Spec) error
	// stream readies the frames (templates or sockets) of st, sent from
	// port from to port to.
	stream(st *streamState, from, to int, spec Spec) error
	// ready runs once every stream is readied, before the receivers.
	ready(ctx context.Context, spec Spec) error
	// receive starts both ports' receivers counting into rx (run id
	// runID; a port with no streams to receive still gets one).
	receive(runID uint8, spec Spec, rx [2]*rxTrial) error
	// sender is port i's transmitter of streams (paced by paceLoop).
	sender(i int, streams []*streamState, runID uint8, spec Spec, stop *atomic.Bool) trialTx
	// stopReceive stops the receivers and returns each port's kernel drops
	// during the trial (only ports that received streams count).
	stopReceive(rxStreams [2][]*streamState) (drops [2]uint64, err error)
	// collect sets res.Paths and the transport's own measurements once
	// traffic has ended.
	collect(res *Result, txs [2]trialTx)
	// passOn says whether the sending port's generator reasons mark the
	// trial tester-limited (the raw transport's back-pressure check may
	// hold them back).
	passOn(port int, r StreamResult, transient bool, reasons []string) bool
	// dropReason says why n kernel drops on receiving port i limit the
	// tester.
	dropReason(i int, n uint64) string
	// judge adds the transport's trial-wide reasons (loads: the intended
	// fps per sending port).
	judge(res *Result, lim *limits, spec Spec, loads [2]float64)
	// release frees the trial's per-trial resources.
	release()
}

// engineState is what an engine keeps between trials: one trial at a time
// (mu), the run id of the last (1 to 255, never 0) and whether it is closed.
type engineState struct {
	mu     sync.Mutex
	runID  uint8
	closed bool
	name   string // "engine", "udp engine": in the closed error
}

// closeOnce runs closePorts, after any running trial, the first time it is
// called, and returns its errors joined; later calls return nil.
func (s *engineState) closeOnce(closePorts func() []error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(closePorts()...)
}

// trialRules are a transport's limits: the safety cap in fps per sending
// port (0: none), the tester-limited tolerance and stall bound, the most
// frames per transmit call at full speed, and whether paced bursts use
// pacedBatch too.
type trialRules struct {
	maxRateFPS  float64
	tol         float64
	maxLag      time.Duration
	batch       int
	pacedBursts bool
	// partialIntervals marks the periodic intervals Partial: the
	// transport sees only this host's part of the trial (RemoteEngine).
	partialIntervals bool
}

// peerRun is a transport whose peer fixes a trial's run id at learning
// (RemoteEngine: both hosts derive it from the trial id).
type peerRun interface{ peerRunID() uint8 }

// runTransport runs one trial over tr: validate, the transport's checks, the rate
// cap, learning, run id, streams and pacers, receivers, traffic and the
// settle wait, counters, tester-limit reasons. unpaced allows a timed trial
// with RateFPS 0 (full speed, for calibration). When ctx is cancelled
// transmission stops, the receiver still drains the settle wait, and the
// partial result comes back with ctx.Err(). A trial the tester could not
// run faithfully is a result with TesterLimited set, not an error.
func runTransport(ctx context.Context, tr transport, spec Spec, unpaced bool) (Result, error) {
	res := Result{Spec: spec}
	res.Spec.OnInterval = nil
	check := spec
	if unpaced && check.RateFPS == 0 {
		check.RateFPS = 1 // a timed trial at full speed: rate 0 is allowed here
	}
	if err := check.Validate(); err != nil {
		return res, err
	}
	es := tr.engine()
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.closed {
		return res, errors.New(es.name + " is closed")
	}
	defer tr.release()
	if err := tr.prepare(spec); err != nil {
		return res, err
	}
	rules := tr.rules()
	// Rate cap, per sending port.
	var perPort [2]int
	for _, s := range spec.Streams {
		perPort[sender(s.Direction)]++
	}
	rate := max(spec.RateFPS, rateChangeFPS(spec))
	for i, n := range perPort {
		if rules.maxRateFPS > 0 && rate*float64(n) > rules.maxRateFPS {
			return res, fmt.Errorf("trial rate %.0f fps on %s exceeds the safety cap max_rate_fps %.0f: lower the rate or raise the cap",
				rate*float64(n), tr.portName(i), rules.maxRateFPS)
		}
	}
	if err := tr.learn(ctx, spec); err != nil {
		return res, err
	}
	es.runID++
	if es.runID == 0 {
		es.runID = 1
	}
	runID := es.runID
	if p, ok := tr.(peerRun); ok {
		runID = p.peerRunID()
	}

	// Streams and their pacers.
	states := make([]*streamState, len(spec.Streams))
	var txStreams, rxStreams [2][]*streamState
	for i, s := range spec.Streams {
		st := newStreamState(s)
		from, to := sender(s.Direction), 1-sender(s.Direction)
		if err := tr.stream(st, from, to, spec); err != nil {
			return res, err
		}
		st.pacer = trialPacer(spec, rules.batch, rules.pacedBursts)
		states[i] = st
		txStreams[from] = append(txStreams[from], st)
		rxStreams[to] = append(rxStreams[to], st)
	}
	if err := tr.ready(ctx, spec); err != nil {
		return res, err
	}

	// Receivers.
	var rx [2]*rxTrial
	for i := range rx {
		rx[i] = newRxTrial(runID, spec.FrameSize, rxStreams[i])
		if spec.OnInterval != nil {
			rx[i].live = newLiveMeter()
		}
	}
	if err := tr.receive(runID, spec, rx); err != nil {
		return res, err
	}

	// Traffic.
	locked := 0
	for i := range txStreams {
		locked += min(len(txStreams[i]), 1) + min(len(rxStreams[i]), 1)
	}
	defer reserveProcs(locked)()
	var stop atomic.Bool
	stopCtx := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopCtx()
	res.Start = time.Now()
	var txs [2]trialTx
	for i := range txs {
		if len(txStreams[i]) > 0 {
			txs[i] = tr.sender(i, txStreams[i], runID, spec, &stop)
		}
	}
	smp := startSamplerOf(spec, res.Start, states, rx, rules.partialIntervals)
	txErr := runTraffic(txs, states, rx, spec.Settle)
	drops, rerr := tr.stopReceive(rxStreams)
	smp.finish(states, rx)

	// Results and tester limits.
	tr.collect(&res, txs)
	res.Paths.TxSched = lastTxSched()
	var lim limits
	assigned := [2]bool{}
	for _, st := range states {
		intended := intendedFPS(st, spec)
		r := st.result(intended)
		from := sender(st.spec.Direction)
		to := 1 - from
		if !assigned[to] {
			r.KernelDrops = drops[to]
			assigned[to] = true
		}
		res.Streams = append(res.Streams, r)
		if gt, gr := generatorReasons(st, r, intended, rules.tol, rules.maxLag, stop.Load()); tr.passOn(from, r, gt, gr) {
			lim.add(gt, gr)
		}
		if r.KernelDrops > 0 {
			lim.add(false, []string{tr.dropReason(to, r.KernelDrops)})
		}
	}
	var loads [2]float64
	for i, n := range perPort {
		loads[i] = rate * float64(n)
	}
	tr.judge(&res, &lim, spec, loads)
	lim.apply(&res)
	res.LossExplained = lossExplained(res, rules.maxLag)
	if txErr != nil {
		return res, fmt.Errorf("trial: %w", txErr)
	}
	if rerr != nil {
		return res, fmt.Errorf("trial: %w", rerr)
	}
	return res, ctx.Err()
}

// batchSender is a transport's transmit side as paceLoop drives it.
type batchSender interface {
	// queue hands n due frames of stream i (s), stamped ns, to the kernel
	// (or its ring) and returns the stamp in force after (re-read when it
	// had to wait for room).
	queue(i int, s *streamState, n int, ns int64) (int64, error)
	// push runs after a round that queued frames (the raw ring's kick).
	push() error
	// idle runs after a round that queued nothing, before the sleep.
	idle()
	// flush sends what is still queued when the loop ends.
	flush() error
}

// paceLoop sends streams until every pacer is done, hardStop (0: none)
// passes or stop is set. The clock is read once per round and every frame
// of a round carries that reading; when nothing is due, the loop sleeps until
// the next frame is. The caller locks and readies the OS thread (txThread).
// It does not allocate.
func paceLoop(tx batchSender, streams []*streamState, hardStop, tagAfter time.Duration, stop *atomic.Bool) error {
	start := time.Now()
	var err error
	for !stop.Load() {
		now := time.Now()
		el := now.Sub(start)
		if hardStop > 0 && el > hardStop {
			break
		}
		ns := now.UnixNano()
		wait := time.Duration(math.MaxInt64)
		queued, active := 0, false
		for i, s := range streams {
			n, w, ok := s.due(el, ns, tagAfter)
			active = active || ok
			if n == 0 {
				wait = min(wait, w)
				continue
			}
			if ns, err = tx.queue(i, s, n, ns); err != nil {
				break
			}
			queued += n
		}
		if err != nil || !active {
			break
		}
		if queued > 0 {
			if err = tx.push(); err != nil {
				break
			}
			publishSent(streams)
			continue
		}
		tx.idle()
		publishSent(streams)
		if wait > 0 && wait != time.Duration(math.MaxInt64) {
			sleep(wait)
		}
	}
	return errors.Join(err, tx.flush())
}

// publishSent publishes each stream's sent count for the interval sampler.
// It does not allocate.
func publishSent(streams []*streamState) {
	for _, s := range streams {
		s.sentPub.Store(s.sent)
	}
}

// trialTx is the transmit side of a trial: the raw engine's transmitter or
// the UDP engine's. run sends the side's streams until their pacers are done,
// the hard stop passes or the trial is stopped.
type trialTx interface{ run() error }

// farTx is a transmit side whose frames leave another host (RemoteEngine's
// port B): its end, wall-clock ns, starts the settle wait as a local
// stream's last frame does.
type farTx interface{ endNs() int64 }

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
	for _, t := range txs {
		if f, ok := t.(farTx); ok {
			lastNs = max(lastNs, f.endNs())
		}
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
