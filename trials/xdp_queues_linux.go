//go:build linux

package trials

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afxdp"
)

// Several queues per port (Config.Queues = n > 1) on the xdp transport.
//
// Each port has n AF_XDP sockets, socket q on queue q, sharing one XDP
// program that redirects a test frame to the socket of the queue it came
// in on. A stream's frames are dealt out over the queues: queue q sends
// sequence numbers q, q+n, q+2n, … (afxdp SendStride) at 1/n of the rate,
// from its own sending thread with its own pacer, so the port offers the
// whole rate. Queue q carries whole flows, those f ≡ q mod n (a stream of
// one flow gets n, one per queue, so a DUT's RSS spreads them as it would
// a real tester's), and the receiver judges order within each flow
// (streamState.flowTop): a multi-queue DUT need not keep order between
// them. The n receive loops of a port count into the one per-stream
// accounting (sequence, loss, latency), a batch at a time.

// raiseProcs makes room in the Go scheduler for an engine with n queues
// per port: its locked threads (n receive loops per port, n sending threads
// per sending port) sleep in nanosleep, a system call that keeps its P
// until the runtime takes it back, and a thread waking with no P to run on
// waits for one. With GOMAXPROCS 2 on this 2-CPU lab, two queues' six
// threads fell 83–146 ms behind their schedules, the queues' first frames
// 12 ms apart, and one loop trial of three offered 1.8 % short; with room
// for every thread (GOMAXPROCS 8) the same test passed 3 of 3, its worst
// lag 14–66 ms. The CPUs are shared as before: the kernel schedules the
// threads (at the senders' priority). It returns the function that
// restores the old setting, if nothing changed it since.
func raiseProcs(n int) (restore func()) {
	old := runtime.GOMAXPROCS(0)
	want := max(old, runtime.NumCPU()+4*n)
	if want == old {
		return nil
	}
	runtime.GOMAXPROCS(want)
	return func() {
		if runtime.GOMAXPROCS(0) == want {
			runtime.GOMAXPROCS(old)
		}
	}
}

// queues is the number of queues per port.
func (e *XDPEngine) queues() int { return len(e.ports[0].xsks) }

// laneStream is one stream's share on one queue: st is the queue's own
// transmit state (pacer at 1/n of the rate, its count of the frames it
// carries), parent the stream's.
type laneStream struct {
	parent, st *streamState
}

// checkQueueCPUs refuses more queues than CPUs: each queue has its own
// sending thread, and two on one CPU take turns instead of adding up.
func checkQueueCPUs(n, cpus int) error {
	if n > cpus {
		return fmt.Errorf("queues %d (--queues): this host has %d CPUs, and each queue's sending thread needs its own; use at most --queues %d", n, cpus, cpus)
	}
	return nil
}

// checkQueueFlows refuses, before traffic, a stream whose flows cannot be
// dealt out whole over n queues.
func checkQueueFlows(spec Spec, n int) error {
	if n <= 1 {
		return nil
	}
	for _, s := range spec.Streams {
		if s.Flows > 1 && s.Flows%n != 0 {
			return fmt.Errorf("trial stream %d flows %d with queues %d (--queues): each queue carries whole flows; give a multiple of %d flows, or 1 (then one flow per queue)",
				s.ID, s.Flows, n, n)
		}
	}
	return nil
}

// queueFlows is the number of flows stream st is sent with over n queues:
// its own, or n (one per queue) for a stream of one flow, whose order the
// receiver then judges per flow.
func queueFlows(st *streamState, n int) int {
	f := max(st.spec.Flows, 1)
	if n > 1 && f == 1 {
		f = n
		st.flowTop = make([]uint64, n)
	}
	return f
}

// laneShare is how many of total frames (sequence numbers 0 … total−1)
// fall to queue q of n: those ≡ q mod n.
func laneShare(total uint64, q, n int) uint64 {
	if total <= uint64(q) {
		return 0
	}
	return (total-uint64(q)-1)/uint64(n) + 1
}

// lanePacer is queue q's pacer of a stream paced by p over n queues: 1/n
// of the rate (and of a rate change's rate), the frames ≡ q mod n of the
// total. ok is false when the queue has no frame of the stream to send.
func lanePacer(p Pacer, q, n int) (lp Pacer, ok bool) {
	lp = p
	lp.RateFPS = p.RateFPS / float64(n)
	if p.Change != nil {
		c := *p.Change
		c.RateFPS /= float64(n)
		lp.Change = &c
	}
	if p.Total > 0 {
		lp.Total = laneShare(p.Total, q, n)
		return lp, lp.Total > 0
	}
	return lp, true
}

// readyQueues splits port i's streams over its queues and writes each
// queue's frames (its flows' templates) into that queue's UMEM.
func (e *XDPEngine) readyQueues(i int, sts []*streamState) error {
	p := e.ports[i]
	n := len(p.xsks)
	e.trial.lanes[i] = make([][]laneStream, n)
	for q, x := range p.xsks {
		var txs []afxdp.TxStream
		for _, st := range sts {
			lp, ok := lanePacer(st.pacer, q, n)
			if !ok {
				continue
			}
			ls := &streamState{spec: st.spec, pacer: lp}
			ls.tagSeq.Store(math.MaxUint64)
			var tpls []*framing.Template
			for f := q; f < len(st.tpls); f += n {
				tpls = append(tpls, st.tpls[f])
			}
			txs = append(txs, afxdp.TxStream{ID: st.spec.ID, Templates: tpls})
			e.trial.lanes[i][q] = append(e.trial.lanes[i][q], laneStream{parent: st, st: ls})
		}
		if len(txs) == 0 {
			continue
		}
		if err := x.PrepareTx(txs); err != nil {
			return fmt.Errorf("%s queue %d: %w", p.where(), q, err)
		}
	}
	return nil
}

// xdpLanes is one port's transmitter of a trial over several queues: one
// xdpTx per queue, each on its own thread.
type xdpLanes struct {
	parents []*streamState
	lanes   []*xdpTx
}

func (e *XDPEngine) laneSender(i int, streams []*streamState, runID uint8, spec Spec, stop *atomic.Bool) *xdpLanes {
	p := e.ports[i]
	n := len(p.xsks)
	x := &xdpLanes{parents: streams}
	for q, lss := range e.trial.lanes[i] {
		if len(lss) == 0 {
			continue
		}
		t := &xdpTx{p: p, xsk: p.xsks[q], q: uint64(q), n: uint64(n), runID: runID, stop: stop,
			cpu: queueCPU(e.cfg.TxCPU-1, q), hardStop: hardStop(spec)}
		if q == 0 {
			t.tagAfter = spec.TagAfter
		}
		for _, ls := range lss {
			t.streams = append(t.streams, ls.st)
			t.parents = append(t.parents, ls.parent)
		}
		x.lanes = append(x.lanes, t)
	}
	return x
}

// run runs every queue's transmitter to its end, then sums their transmit
// state into the streams' (frames queued and sent, first and last stamps,
// lag and catch-up), which the trial's results read.
func (x *xdpLanes) run() error {
	errs := make([]error, len(x.lanes))
	var wg, ready sync.WaitGroup
	start := make(chan struct{})
	ready.Add(len(x.lanes))
	for k, t := range x.lanes {
		t.ready, t.start = &ready, start
		wg.Go(func() { errs[k] = t.run() })
	}
	ready.Wait()
	close(start)
	wg.Wait()
	for _, t := range x.lanes {
		for k, ls := range t.streams {
			s := t.parents[k]
			s.queued += ls.queued
			s.sent += ls.sent
			s.failed += ls.failed
			if ls.firstNs != 0 && (s.firstNs == 0 || ls.firstNs < s.firstNs) {
				s.firstNs = ls.firstNs
			}
			s.lastNs = max(s.lastNs, ls.lastNs)
			s.drainNs = max(s.drainNs, ls.drainNs)
			s.maxLag = max(s.maxLag, ls.maxLag)
			s.peakOverspeed = max(s.peakOverspeed, ls.peakOverspeed)
			s.burst += ls.burst
		}
	}
	for _, s := range x.parents {
		s.sentPub.Store(s.sent)
	}
	return errors.Join(errs...)
}

// pressure sums the queues' back-pressure measurements: counts add up;
// times, CPU time included (Busy: the busiest sending thread), are the
// longest queue's.
func (x *xdpLanes) pressure() TxPressure {
	var p TxPressure
	for _, t := range x.lanes {
		l := t.press.p
		p.WallNs = max(p.WallNs, l.WallNs)
		p.CPUNs = max(p.CPUNs, l.CPUNs)
		p.Kicks += l.Kicks
		p.Refused += l.Refused
		p.RingFullWaits += l.RingFullWaits
		p.RingFullNs = max(p.RingFullNs, l.RingFullNs)
		p.RingFullMaxNs = max(p.RingFullMaxNs, l.RingFullMaxNs)
		p.DrainNs = max(p.DrainNs, l.DrainNs)
	}
	return p
}

// QueueCounts returns, per port (A, B) and queue, the frames the queue's
// socket has sent (completed by the kernel) and received since the engine
// opened. Call it between trials.
func (e *XDPEngine) QueueCounts() (sent, received [2][]uint64, err error) {
	for i, p := range e.ports {
		for q, x := range p.xsks {
			st, serr := x.Stats()
			if serr != nil {
				return sent, received, fmt.Errorf("%s queue %d: %w", p.where(), q, serr)
			}
			sent[i] = append(sent[i], st.TxCompleted)
			received[i] = append(received[i], st.RxFrames)
		}
	}
	return sent, received, nil
}
