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

	"github.com/rfc2544/rfc2544/framing"
)

// Engine is the raw-transport traffic engine: two AF_PACKET ports, a
// receiver on each for the engine's whole life (it answers the DUT's ARP for
// the tester's addresses and counts test frames), and a transmitter per port
// per trial. Open it once, Run many trials, Close it. An Engine runs one
// trial at a time; Run is safe to call from several goroutines (calls
// queue).
type Engine struct {
	engineState
	cfg   Config
	ports [2]*port // A, B
	trial rawTrial
	// macs are the DUT's MACs on the A and B sides, learned at Open;
	// macs6 the same for IPv6, learned at the first IPv6 trial.
	macs  [2][6]byte
	macs6 [2][6]byte
}

// Open opens both ports, starts their receivers and resolves the DUT's MAC
// on each side by ARP (Config.ResolveTimeout per side). Errors name the port
// and say what to fix: a missing or down interface, missing privileges
// ("needs root or CAP_NET_RAW"), a DUT that does not answer ARP.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("engine config: %w", err)
	}
	if cfg.Queues > 1 {
		return nil, fmt.Errorf("queues %d (--queues): the raw transport sends on one queue per port; use --transport xdp for several, or --queues 1", cfg.Queues)
	}
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg, engineState: engineState{name: "engine"}}
	for i, pc := range []PortConfig{cfg.A, cfg.B} {
		p, err := openPort([]string{"A", "B"}[i], pc, cfg, false)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.ports[i] = p
		// Set up the transmit path now, so Paths is true before the first
		// trial (a trial of larger frames reopens it with larger slots).
		if err := p.prepareTx(framing.MinFrameSize(framing.IPv4UDP, false)-framing.FCSLen, cfg.NoTxRing, cfg.QdiscPath); err != nil {
			e.Close()
			return nil, fmt.Errorf("%s: %w", p.where(), err)
		}
	}
	// Resolve both sides at once.
	var err error
	if e.macs, err = resolveBoth(e.neighbours(), cfg.ResolveTimeout, false, false); err != nil {
		e.Close()
		return nil, fmt.Errorf("learn the DUT's addresses: %w", err)
	}
	if err := ctx.Err(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Paths reports the kernel paths the engine uses (those of port A's
// transmitter and port B's receiver; both ports are set up alike).
func (e *Engine) Paths() Paths {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pathsLocked()
}

func (e *Engine) pathsLocked() Paths {
	p := e.ports[0].paths
	b := e.ports[1].paths
	// Report the weaker path when the ports differ.
	if b.TX == "sendto" {
		p.TX = "sendto"
	}
	p.QdiscBypass = p.QdiscBypass && b.QdiscBypass
	return p
}

// DUTMAC returns the DUT's MAC learned on port A (0) or B (1).
func (e *Engine) DUTMAC(side int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return macOf(e.macs[side]).String()
}

// ARPAnswered reports how many ARP requests for the tester's own addresses
// the engine has answered on ports A and B.
func (e *Engine) ARPAnswered() (a, b uint64) {
	return e.ports[0].answered.arp.Load(), e.ports[1].answered.arp.Load()
}

// Close stops the receivers and closes the sockets.
func (e *Engine) Close() error {
	return e.closeOnce(func() (errs []error) {
		for _, p := range e.ports {
			if p != nil {
				errs = append(errs, p.close())
			}
		}
		return errs
	})
}

// Run runs one trial: learning (when spec.Learning > 0: ARP requests to the
// DUT on both sides, then the wait), traffic on every stream, the settle
// wait, then counters. When ctx is cancelled transmission stops, the
// receiver still drains the settle wait, and the partial result comes back
// with ctx.Err(). A trial the tester could not run faithfully is a result
// with TesterLimited set, not an error.
func (e *Engine) Run(ctx context.Context, spec Spec) (Result, error) {
	return e.run(ctx, spec, false)
}

// run is Run; unpaced allows a timed trial with RateFPS 0 (full speed, for
// calibration).
func (e *Engine) run(ctx context.Context, spec Spec, unpaced bool) (Result, error) {
	return runTransport(ctx, e, spec, unpaced)
}

// rawTrial is the raw transport's per-trial state.
type rawTrial struct {
	linkDrops0, linkDrops, kdrops [2]uint64
	linkOK                        [2]bool
	pz                            pauseSnap
	press                         [2]*TxPressure
	fc                            flowCheck
}

var _ transport = (*Engine)(nil)

func (e *Engine) engine() *engineState { return &e.engineState }

func (e *Engine) rules() trialRules {
	return trialRules{maxRateFPS: e.cfg.MaxRateFPS, tol: e.cfg.TesterLimitTolerance, maxLag: e.cfg.MaxLag, batch: e.cfg.Batch, pacedBursts: true}
}

func (e *Engine) portName(i int) string { return "port " + e.ports[i].name }

func (e *Engine) prepare(spec Spec) error {
	e.trial = rawTrial{}
	for _, p := range e.ports {
		if err := p.checkFrames(spec, p.mtu); err != nil {
			return err
		}
	}
	return nil
}

// learn sends the learning frames and waits Spec.Learning (learnBoth).
func (e *Engine) learn(ctx context.Context, spec Spec) error {
	return learnBoth(ctx, e.neighbours(), e.cfg.ResolveTimeout, spec, &e.macs, &e.macs6)
}

func (e *Engine) neighbours() [2]*neighbour {
	return [2]*neighbour{&e.ports[0].neighbour, &e.ports[1].neighbour}
}

// stream builds st's frame templates, one per flow; for a frame-size mix,
// one per place in the mix's pattern and flow (streamSizes), which the
// transmitter cycles frame by frame.
func (e *Engine) stream(st *streamState, from, to int, spec Spec) error {
	flows := max(st.spec.Flows, 1)
	for k, size := range streamSizes(spec.FrameSize, flows) {
		f := k % flows
		dmac, src, dst := e.macs[from], e.ports[from].cfg.Addr.Addr(), e.ports[to].cfg.Addr.Addr()
		if spec.IPv6 {
			dmac, src, dst = e.macs6[from], e.ports[from].cfg.Addr6.Addr(), e.ports[to].cfg.Addr6.Addr()
		}
		tpl, err := framing.NewTemplate(framing.TemplateConfig{
			SrcMAC:    macOf(e.ports[from].mac),
			DstMAC:    macOf(dmac),
			SrcIP:     src,
			DstIP:     dst,
			SrcPort:   framing.DefaultSrcPort + uint16(f),
			DstPort:   framing.DefaultDstPort,
			FrameSize: size,
		})
		if err != nil {
			return fmt.Errorf("stream %d: %w", st.spec.ID, err)
		}
		st.tpls = append(st.tpls, tpl)
	}
	return nil
}

func (e *Engine) ready(context.Context, Spec) error { return nil }

// receive readies each port's transmit ring for the frame size, sets its
// receive filter to the run id and attaches the trial to its receiver.
func (e *Engine) receive(runID uint8, spec Spec, rx [2]*rxTrial) error {
	for i, p := range e.ports {
		if err := p.prepareTx(framing.LargestFrame(spec.FrameSize)-framing.FCSLen, e.cfg.NoTxRing, e.cfg.QdiscPath); err != nil {
			return fmt.Errorf("%s: %w", p.where(), err)
		}
		if err := p.setFilter(runID); err != nil {
			return err
		}
		if _, err := p.attach(rx[i]); err != nil {
			return fmt.Errorf("%s: %w", p.where(), err)
		}
	}
	for i, p := range e.ports {
		e.trial.linkDrops0[i], e.trial.linkOK[i] = p.linkRxDrops()
	}
	e.trial.pz = snapPause(e.ports)
	return nil
}

func (e *Engine) sender(i int, streams []*streamState, runID uint8, spec Spec, stop *atomic.Bool) trialTx {
	t := newTransmitter(e.ports[i], streams, runID, e.cfg.Batch, stop)
	t.tagAfter = spec.TagAfter
	t.cpu = e.cfg.TxCPU - 1
	t.hardStop = hardStop(spec)
	return t
}

// stopReceive detaches the receivers; a port's drops are the larger of its
// socket's and its link's rx_dropped (which may include the socket's own),
// never the sum.
func (e *Engine) stopReceive(rxStreams [2][]*streamState) (drops [2]uint64, err error) {
	t := &e.trial
	var errs []error
	for i, p := range e.ports {
		st, err := p.attach(nil)
		errs = append(errs, err, p.setFilter(0))
		t.kdrops[i] += st.Drops
		if n, ok := p.linkRxDrops(); ok && t.linkOK[i] && n > t.linkDrops0[i] && len(rxStreams[i]) > 0 {
			t.linkDrops[i] = n - t.linkDrops0[i]
		}
		drops[i] = max(t.kdrops[i], t.linkDrops[i])
	}
	if err := errors.Join(errs...); err != nil {
		return drops, fmt.Errorf("read receive counters: %w", err)
	}
	return drops, nil
}

func (e *Engine) collect(res *Result, txs [2]trialTx) {
	res.Paths = e.pathsLocked()
	e.trial.press = txPressures(txs, res, e.trial.pz.since(e.ports))
}

func (e *Engine) passOn(port int, r StreamResult, transient bool, reasons []string) bool {
	return e.trial.fc.add(port, r, transient, reasons, e.trial.press[port], e.cfg.MaxLag)
}

func (e *Engine) dropReason(i int, n uint64) string {
	return fmt.Sprintf("port %s: the receiving side dropped %d frames in the kernel (socket %d, interface %s rx_dropped %d)",
		e.ports[i].name, n, e.trial.kdrops[i], e.ports[i].cfg.Interface, e.trial.linkDrops[i])
}

// judge adds the calibrated ceiling (loss at or above what this tester can
// carry is the tester's) and the back-pressure verdict.
func (e *Engine) judge(res *Result, lim *limits, spec Spec, loads [2]float64) {
	lim.add(false, ceilingReasons(e.cfg.CeilingFPS, spec.FrameSize, loads, res.LossPercent(), e.cfg.TesterLimitTolerance))
	e.trial.fc.apply(res, lim, e.trial.press, e.cfg.CeilingFPS, spec.FrameSize)
}

func (e *Engine) release() {}

// Generate sends frames on one interface without receiver or learning (the
// benchmark's generator-only mode). It uses the engine's transmit path;
// with c.Queues > 1, one transmit socket and thread per queue (genQueues).
func Generate(ctx context.Context, c GenConfig) (GenResult, error) {
	if err := c.check(); err != nil {
		return GenResult{}, err
	}
	return genQueues(c, func(q int, c GenConfig) (GenResult, error) { return generateRaw(ctx, c, q) })
}

// generateRaw is Generate's queue q: its own socket and ring, source port
// DefaultSrcPort+q, its thread pinned to the q-th CPU the process may use
// when there are several.
func generateRaw(ctx context.Context, c GenConfig, q int) (GenResult, error) {
	var res GenResult
	p, err := openPort("gen", PortConfig{Namespace: c.Namespace, Interface: c.Interface}, Config{QdiscPath: c.QdiscPath}, true)
	if err != nil {
		return res, err
	}
	defer p.close()
	if err := p.prepareTx(c.FrameSize-framing.FCSLen, c.NoTxRing, c.QdiscPath); err != nil {
		return res, err
	}
	tpl, err := framing.NewTemplate(framing.TemplateConfig{SrcMAC: macOf(p.mac), DstMAC: c.DstMAC,
		SrcIP: c.SrcIP, DstIP: c.DstIP, SrcPort: framing.DefaultSrcPort + uint16(q), DstPort: c.DstPort, FrameSize: c.FrameSize})
	if err != nil {
		return res, err
	}
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	st.tpls = []*framing.Template{tpl}
	st.pacer = trialPacer(Spec{RateFPS: c.RateFPS, Duration: c.Duration}, c.Batch, true)
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	t := newTransmitter(p, []*streamState{st}, 1, c.Batch, &stop)
	if c.Queues > 1 {
		t.cpu = allowedCPU(q)
	}
	t.hardStop = c.Duration
	if c.RateFPS > 0 {
		t.hardStop = c.Duration + c.Duration/100 + 10*time.Millisecond
	}
	err = t.run()
	r := st.result(c.RateFPS)
	res = GenResult{Sent: st.sent, Failed: st.failed, Seconds: r.TxSeconds, OfferedFPS: r.OfferedFPS, Paths: p.paths}
	if err != nil {
		return res, err
	}
	return res, ctx.Err()
}

// genQueues runs one(q, c) for each of c.Queues queues at once and sums
// what they sent: frames, the longest send time, the offered rates. At a
// rate, queue q sends its share of the frames one queue would (those
// ≡ q mod n of ⌈rate × duration⌉, laneShare) over the duration, so the
// queues together send exactly those; at full speed, each as fast as it
// can.
func genQueues(c GenConfig, one func(q int, c GenConfig) (GenResult, error)) (GenResult, error) {
	n := max(c.Queues, 1)
	if n == 1 {
		res, err := one(0, c)
		res.Queues = 1
		return res, err
	}
	defer reserveProcs(n)()
	total := uint64(math.Ceil(c.RateFPS*c.Duration.Seconds() - 1e-9))
	res := make([]GenResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for q := range n {
		qc := c
		if c.RateFPS > 0 {
			qc.RateFPS = float64(laneShare(total, q, n)) / c.Duration.Seconds()
		}
		wg.Go(func() { res[q], errs[q] = one(q, qc) })
	}
	wg.Wait()
	sum := GenResult{Paths: res[0].Paths, Queues: n}
	for _, r := range res {
		sum.Sent += r.Sent
		sum.Failed += r.Failed
		sum.Seconds = max(sum.Seconds, r.Seconds)
		sum.OfferedFPS += r.OfferedFPS
	}
	return sum, errors.Join(errs...)
}

// Calibrate measures the raw tester's ceiling per frame size on a loop
// (port A connected to port B with nothing between, e.g. the lab's loop
// topology): for each size, A sends at full speed for d and B counts
// (calibrate). Feed the points to Config.CeilingFPS (CeilingMap).
func Calibrate(ctx context.Context, cfg Config, sizes []int, d time.Duration) ([]CalibrationPoint, error) {
	if err := checkCalibration(sizes, d); err != nil {
		return nil, err
	}
	e, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return calibrate(ctx, e, sizes, d)
}
