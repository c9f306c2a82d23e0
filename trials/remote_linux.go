//go:build linux

package trials

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/wait"
)

// RemoteEngine runs two-host trials: port A's UDP sockets on this host and
// port B through a Remote. A->B streams are a local sender and port B's
// receiver, B->A streams port B's sender and a local receiver, a
// bidirectional trial both; the results of both hosts are merged into one
// Result. It implements rfc2544.Tester; Run calls queue.
type RemoteEngine struct {
	engineState
	cfg   RemoteConfig
	r     Remote
	mu    sync.Mutex // one Run at a time, through its result
	id    uint64     // the last trial's
	trial *remoteTrial
	// failed is why the last trial has no counters from port B (lost,
	// or its Stop failed); mergeErr why they did not merge.
	failed, mergeErr error
}

// NewRemote returns a RemoteEngine driving r as port B.
func NewRemote(cfg RemoteConfig, r Remote) (*RemoteEngine, error) {
	if cfg.Local.Port == 0 {
		cfg.Local.Port = DefaultUDPPort
	}
	if err := validateLimits("", 0, cfg.TesterLimitTolerance); err != nil {
		return nil, err
	}
	return &RemoteEngine{engineState: engineState{name: "remote engine"}, cfg: cfg, r: r}, nil
}

// Run runs one trial across the two hosts, through the one trial skeleton
// (runTransport): port A is this host's UDP sockets, port B the Remote.
// The settle wait starts when the later of both hosts' streams ends. When
// ctx is cancelled port A stops sending, port B is still stopped after the
// settle wait, and the partial result comes back with ctx.Err(). When port
// B is lost during the trial, or its Stop fails, Run returns the Spec
// without counters and an error wrapping Remote.Err (or Stop's error): a
// trial without port B's counters cannot be judged.
func (e *RemoteEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed, e.mergeErr = nil, nil
	res, err := runTransport(ctx, e, spec, false)
	if e.failed != nil {
		return Result{Spec: spec, Start: res.Start}, e.failed
	}
	if err == nil {
		err = e.mergeErr
	}
	return res, err
}

// remoteTrial is a RemoteEngine's per-trial state.
type remoteTrial struct {
	ctx       context.Context // the trial's: for port B's calls
	spec      Spec
	id        uint64
	local     netip.Addr
	peer      netip.Addr
	ready     RemoteReady
	set       bool // port B was set up and not yet stopped
	roundTrip bool
	payload   int
	tx        []*udpStreamTx // port A's A->B streams
	rx        *udpReceive    // port A's receiver: B->A streams and reflected frames; nil when none
	rxLive    bool           // rx's loop is running
	rxs       [2]*rxTrial
	startNs   int64 // when port B was told to start

	watch    sync.Once
	watching sync.WaitGroup
	ended    chan struct{} // closed when traffic and the settle wait are over
	lostCh   chan struct{} // closed when port B was lost during traffic
	lost     error

	remote RemoteResult
	have   bool // remote holds port B's counters
}

var (
	_ transport = (*RemoteEngine)(nil)
	_ peerRun   = (*RemoteEngine)(nil)
)

func (e *RemoteEngine) engine() *engineState { return &e.engineState }

func (e *RemoteEngine) half() RemotePort {
	return RemotePort{Namespace: e.cfg.Local.Namespace, SocketBuffer: e.cfg.SocketBuffer, Batch: e.cfg.Batch,
		TesterLimitTolerance: e.cfg.TesterLimitTolerance, MaxLag: e.cfg.MaxLag}.withDefaults()
}

func (e *RemoteEngine) rules() trialRules {
	h := e.half()
	return trialRules{tol: h.TesterLimitTolerance, maxLag: h.MaxLag, batch: h.Batch, partialIntervals: true}
}

func (e *RemoteEngine) portName(i int) string { return []string{"udp port A", "the agent's port B"}[i] }

// prepare refuses, before port B hears of it, a trial port A cannot carry:
// its IP family, its frame size (against the MTU of the local interface)
// and its flows.
func (e *RemoteEngine) prepare(spec Spec) error {
	t := &remoteTrial{spec: spec, ended: make(chan struct{}), lostCh: make(chan struct{})}
	e.trial = t
	t.local, t.peer = e.cfg.Local.Addr, e.r.Addr().Unmap()
	if spec.IPv6 {
		t.local = e.cfg.Local.Addr6
	}
	if !t.local.IsValid() || t.peer.Is6() != spec.IPv6 {
		return fmt.Errorf("trial ipv6=%v: the agent is reached at %v; for this family connect to the agent's address of that family", spec.IPv6, t.peer)
	}
	ns := e.cfg.Local.Namespace
	if ab := streamsOf(spec, AtoB); len(ab) > 0 {
		if err := checkHalf(ns, spec, ab, t.local, "udp send"); err != nil {
			return fmt.Errorf("local sender: %w", err)
		}
	}
	if err := checkHalf(ns, spec, streamsOf(spec, BtoA), t.local, "udp receive"); err != nil {
		return fmt.Errorf("local receiver: %w", err)
	}
	proto := framing.IPv4UDP
	if spec.IPv6 {
		proto = framing.IPv6UDP
	}
	t.payload = framing.UDPPayloadSize(spec.FrameSize, proto, false)
	return nil
}

// learn sets the trial up on port B, which answers with its receive port
// and the run id.
func (e *RemoteEngine) learn(ctx context.Context, spec Spec) error {
	t := e.trial
	e.id++
	t.id, t.ctx = e.id, ctx
	ready, err := e.r.Setup(ctx, RemoteTrial{ID: t.id, Spec: spec, Port: e.cfg.Local.Port, RoundTrip: !e.cfg.OneWay && len(streamsOf(spec, AtoB)) > 0})
	if err != nil {
		return fmt.Errorf("agent trial setup: %w", err)
	}
	t.ready, t.set = ready, true
	t.roundTrip = ready.Reflect && len(streamsOf(spec, AtoB)) > 0
	return nil
}

func (e *RemoteEngine) peerRunID() uint8 { return e.trial.ready.RunID }

// stream opens port A's sockets of an A->B stream, one per flow, each
// connected to port B only; a B->A stream is port B's to send.
func (e *RemoteEngine) stream(st *streamState, from, _ int, _ Spec) error {
	if from != 0 {
		// A B->A stream, sent on port B's clock: unless the clocks are
		// declared synchronized its latency trend is relative.
		st.trend.relative = !e.cfg.OneWay
		return nil
	}
	t := e.trial
	stx := &udpStreamTx{st: st}
	t.tx = append(t.tx, stx)
	if err := openHalfFlows(stx, e.half(), t.local, netip.AddrPortFrom(t.peer, t.ready.Port), t.payload); err != nil {
		return fmt.Errorf("local sender: %w", err)
	}
	return nil
}

// ready opens port A's receive socket (before port B may send to it),
// starts port B, then sends port A's learning datagrams, one per flow, and
// waits Spec.Learning (at least udpMinLearning) while port B learns too.
func (e *RemoteEngine) ready(ctx context.Context, spec Spec) error {
	t := e.trial
	if len(streamsOf(spec, BtoA)) > 0 || t.roundTrip {
		rx, err := openUDPReceive(e.half(), spec, streamsOf(spec, BtoA), RemoteReceive{Listen: netip.AddrPortFrom(t.local, e.cfg.Local.Port), From: t.peer})
		if err != nil {
			return fmt.Errorf("local receiver: %w", err)
		}
		t.rx = rx
	}
	if err := e.r.Start(ctx, t.id); err != nil {
		return fmt.Errorf("agent trial start: %w", err)
	}
	t.startNs = time.Now().UnixNano()
	for _, st := range t.tx {
		for _, fl := range st.flows {
			_, _ = fl.conn.Write(fl.learn)
		}
	}
	return wait.Sleep(ctx, max(spec.Learning, udpMinLearning))
}

// receive starts port A's receiver counting into rx[0] (the B->A streams,
// and the reflected copies of the A->B streams when port B reflects);
// rx[1] is port B's, which counts on its own host.
func (e *RemoteEngine) receive(_ uint8, spec Spec, rx [2]*rxTrial) error {
	t := e.trial
	t.rxs = rx
	if t.rx == nil {
		return nil
	}
	if t.roundTrip {
		t.rx.echo(rx[0], streamsOf(spec, AtoB), func(id uint16) *streamState {
			for _, s := range t.tx {
				if s.st.spec.ID == id {
					return s.st
				}
			}
			return nil
		})
	}
	t.rx.start(rx[0])
	t.rxLive = true
	return nil
}

// sender is port A's paced sender (port 0) or the wait for port B's
// planned end (port 1). Either starts the watch on port B: lost during
// the trial, it stops the trial at once.
func (e *RemoteEngine) sender(i int, streams []*streamState, runID uint8, spec Spec, stop *atomic.Bool) trialTx {
	t := e.trial
	t.watch.Do(func() {
		t.watching.Go(func() {
			select {
			case <-e.r.Done():
				t.lost = fmt.Errorf("agent trial %d: %w", t.id, e.r.Err())
				stop.Store(true)
				close(t.lostCh)
			case <-t.ended:
			}
		})
	})
	if i == 0 {
		return &udpTransmitter{streams: t.tx, runID: runID, stop: stop, tagAfter: spec.TagAfter, cpu: -1, where: "udp sender", hardStop: hardStop(spec)}
	}
	// Port B's streams end after its learning wait (at least
	// udpMinLearning) and their traffic: Length less the settle wait.
	end := time.Unix(0, t.startNs).Add(t.ready.Length - spec.Settle + udpMinLearning)
	return &remoteWait{end: end, ctx: t.ctx, lost: t.lostCh}
}

// remoteWait is port B's transmit side as port A sees it: the wait until
// its streams' planned end, cut short when port B is lost or the trial is
// cancelled.
type remoteWait struct {
	end  time.Time
	ctx  context.Context
	lost <-chan struct{}
	at   int64
}

func (w *remoteWait) run() error {
	timer := time.NewTimer(time.Until(w.end))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-w.lost:
	case <-w.ctx.Done():
	}
	w.at = min(time.Now().UnixNano(), w.end.UnixNano())
	return nil
}

func (w *remoteWait) endNs() int64 { return w.at }

// stopReceive stops port A's receiver, then port B's part of the trial
// (with port A's sent counts), and writes port B's counts where the
// skeleton reads them: the B->A streams' sent counts, and the A->B frames
// port B received into the final interval.
func (e *RemoteEngine) stopReceive(rxStreams [2][]*streamState) (drops [2]uint64, err error) {
	t := e.trial
	close(t.ended)
	t.watching.Wait()
	if t.rxLive {
		err = t.rx.halt()
		t.rxLive = false
		if len(rxStreams[0]) > 0 {
			drops[0] = t.rx.kernelDrops()
		}
	}
	if t.lost != nil {
		e.failed, t.set = t.lost, false
		return drops, err
	}
	sent := []StreamResult{}
	for _, s := range t.tx {
		sent = append(sent, StreamResult{ID: s.st.spec.ID, Direction: AtoB, Sent: s.st.sent})
	}
	sctx := t.ctx
	if sctx.Err() != nil {
		// A cancelled trial still collects port B's counters.
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(context.WithoutCancel(sctx), 5*time.Second)
		defer cancel()
	}
	remote, serr := e.r.Stop(sctx, t.id, sent)
	if serr != nil {
		e.failed = fmt.Errorf("agent trial stop: %w", serr)
		return drops, err
	}
	t.set, t.remote, t.have = false, remote, true
	sentBy := map[uint16]uint64{}
	for _, r := range remote.Streams {
		sentBy[r.ID] = r.Sent
	}
	for _, st := range rxStreams[0] {
		n, ok := sentBy[st.spec.ID]
		if !ok {
			n = st.received
		}
		st.sent, st.queued = n, n
		st.pacer = trialPacer(t.spec, pacedBatch, false) // port B's schedule, for the loss timing
	}
	if live := t.rxs[1].live; live != nil {
		for _, s := range t.tx {
			for _, r := range remote.Streams {
				if r.ID == s.st.spec.ID && r.Direction == AtoB {
					live.pend.received += min(r.Received, s.st.sent)
				}
			}
		}
		live.publish()
	}
	return drops, err
}

func (e *RemoteEngine) collect(res *Result, _ [2]trialTx) {
	t := e.trial
	res.Paths = Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}
	for _, st := range t.tx {
		if len(st.flows) > 0 && st.flows[0].gso {
			res.Paths.TX = "sendmmsg+udp_segment"
		}
	}
	if t.rx != nil && !t.rx.r.tsSeen {
		res.Paths.Timestamps = "none"
	}
	if t.roundTrip {
		res.Paths.Latency = "round-trip"
	} else if e.cfg.OneWay {
		res.Paths.Latency = "one-way"
	}
}

// passOn keeps port A's generator reasons but its stalls, which are judged
// once port B's counts give the loss; port B judges its own generator.
func (e *RemoteEngine) passOn(port int, _ StreamResult, transient bool, _ []string) bool {
	return port == 0 && !transient
}

func (e *RemoteEngine) dropReason(_ int, n uint64) string {
	return fmt.Sprintf("controller: the receiving socket dropped %d datagrams in the kernel", n)
}

// judge merges port B's counters into the trial's streams, then adds port
// B's tester limits and the catch-up rule of every stream, which needs the
// loss only the merge knows.
func (e *RemoteEngine) judge(res *Result, lim *limits, spec Spec, _ [2]float64) {
	t := e.trial
	if !t.have {
		return
	}
	echo := map[uint16]StreamResult{}
	if t.rx != nil {
		for _, st := range t.rx.rtt {
			st.sent = st.received
			echo[st.spec.ID] = st.result(spec.RateFPS)
		}
	}
	for i, s := range res.Streams {
		if s.Direction != AtoB {
			continue
		}
		s.Latency, s.TaggedLatencyNs = LatencySummary{}, -1
		if rt, ok := echo[s.ID]; ok {
			s.Latency, s.TaggedLatencyNs = rt.Latency, rt.TaggedLatencyNs
			s.Trend = roundTripTrend(rt.Trend)
		}
		res.Streams[i] = s
	}
	out, err := mergeRemote(e.cfg.OneWay, t.id, *res, t.remote)
	if err != nil {
		e.mergeErr = err
	}
	if out.TesterLimited {
		// Transient only when port B says all its reasons are stalls of
		// its host (an older agent never does).
		lim.add(!res.TesterLimited && t.remote.TesterLimitTransient, []string{out.TesterLimitReason})
		out.TesterLimited, out.TesterLimitReason = false, ""
	}
	// Port B's generator lag of B->A streams, and the catch-up rule for
	// every stream.
	var reasons []string
	for i, s := range out.Streams {
		if s.Direction == BtoA {
			for _, r := range t.remote.Streams {
				if r.ID == s.ID {
					out.Streams[i].MaxLagNs = r.MaxLagNs
					out.Streams[i].CatchUpOverspeed = r.CatchUpOverspeed
					out.Streams[i].CatchUpBurstFrames = r.CatchUpBurstFrames
				}
			}
		}
		who := "controller: "
		if s.Direction == BtoA {
			who = "agent: "
		}
		if why := stallReason(out.Streams[i], e.half().MaxLag); why != "" {
			reasons = append(reasons, who+why)
		}
	}
	lim.add(true, reasons)
	*res = out
}

// release stops port B's part of a trial that failed before its Stop
// (unless port B is lost), and closes port A's sockets.
func (e *RemoteEngine) release() {
	t := e.trial
	if t == nil {
		return
	}
	e.trial = nil
	select {
	case <-t.ended:
	default:
		close(t.ended)
	}
	t.watching.Wait()
	if t.set {
		select {
		case <-e.r.Done():
		default:
			sctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), 5*time.Second)
			e.r.Stop(sctx, t.id, nil)
			cancel()
		}
	}
	for _, st := range t.tx {
		st.close()
	}
	if t.rx != nil {
		if t.rxLive {
			t.rx.halt()
		}
		t.rx.r.conn.Close()
	}
}

// roundTripTrend is the latency trend of a stream's reflected frames, for
// the sustained-rate verdict (Result.Sustained) when port B sent no trend
// of its own for the stream (mergeRemote prefers that one: it times every
// frame, not a sample, on the A->B path alone). The round trip crosses the
// A->B queue, so its growth shows; the reflected frames are a sample at a
// capped rate (a token bucket in time, not every k-th frame), so their
// count says nothing of the rate the DUT forwarded; their sequence numbers
// do (ForwardedSeqFPS), and that is the forwarded rate the verdict's end
// test (LatencyTrend.OverloadedAtEnd) reads.
func roundTripTrend(t *LatencyTrend) *LatencyTrend {
	if t == nil {
		return nil
	}
	c := *t
	c.ForwardedFPS = c.ForwardedSeqFPS
	return &c
}
