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
	cfg   Config
	ports [2]*port // A, B
	mu    sync.Mutex
	runID uint8
	// macs are the DUT's MACs on the A and B sides, learned at Open;
	// macs6 the same for IPv6, learned at the first IPv6 trial.
	macs   [2][6]byte
	macs6  [2][6]byte
	closed bool
}

// Open opens both ports, starts their receivers and resolves the DUT's MAC
// on each side by ARP (Config.ResolveTimeout per side). Errors name the port
// and say what to fix: a missing or down interface, missing privileges
// ("needs root or CAP_NET_RAW"), a DUT that does not answer ARP.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("engine config: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg}
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
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, p := range e.ports {
		wg.Go(func() {
			e.macs[i], errs[i] = p.resolve(cfg.ResolveTimeout, false)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
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
	return e.ports[0].arpAnswered.Load(), e.ports[1].arpAnswered.Load()
}

// Close stops the receivers and closes the sockets.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, p := range e.ports {
		if p != nil {
			errs = append(errs, p.close())
		}
	}
	return errors.Join(errs...)
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
	res := Result{Spec: spec}
	check := spec
	if unpaced && check.RateFPS == 0 {
		check.RateFPS = 1 // a timed trial at full speed: rate 0 is allowed here
	}
	if err := check.Validate(); err != nil {
		return res, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return res, errors.New("engine is closed")
	}
	proto := framing.IPv4UDP
	if spec.IPv6 {
		proto = framing.IPv6UDP
		for _, p := range e.ports {
			if !p.cfg.Addr6.IsValid() || !p.cfg.Gateway6.IsValid() {
				return res, fmt.Errorf("trial ipv6: %s has no addr6 and gateway6: configure the port's IPv6 address and the DUT's", p.where())
			}
		}
	}
	for _, p := range e.ports {
		if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, p.mtu); err != nil {
			return res, fmt.Errorf("trial frame_size on %s (MTU %d): %w", p.where(), p.mtu, err)
		}
	}
	// Rate cap, per sending port.
	var perPort [2]int
	for _, s := range spec.Streams {
		perPort[sender(s.Direction)]++
	}
	rate := max(spec.RateFPS, rateChangeFPS(spec))
	for i, n := range perPort {
		if e.cfg.MaxRateFPS > 0 && rate*float64(n) > e.cfg.MaxRateFPS {
			return res, fmt.Errorf("trial rate %.0f fps on port %s exceeds the safety cap max_rate_fps %.0f: lower the rate or raise the cap",
				rate*float64(n), e.ports[i].name, e.cfg.MaxRateFPS)
		}
	}

	// Learning (RFC 2544 §23): learning frames (ARP, or neighbor
	// solicitations for IPv6), then the wait. IPv6 neighbors are resolved
	// at the first IPv6 trial even without learning.
	if spec.Learning > 0 || spec.IPv6 {
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, p := range e.ports {
			if spec.IPv6 {
				wg.Go(func() { e.macs6[i], errs[i] = p.resolve6(e.cfg.ResolveTimeout, spec.Learning > 0) })
			} else {
				wg.Go(func() { e.macs[i], errs[i] = p.resolve(e.cfg.ResolveTimeout, true) })
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return res, fmt.Errorf("learning: %w", err)
		}
		if err := sleepCtx(ctx, spec.Learning); err != nil {
			return res, err
		}
	}

	e.runID++
	if e.runID == 0 {
		e.runID = 1
	}
	runID := e.runID

	// Streams, templates, pacers.
	states := make([]*streamState, len(spec.Streams))
	var txStreams, rxStreams [2][]*streamState
	for i, s := range spec.Streams {
		st := newStreamState(s)
		from, to := sender(s.Direction), 1-sender(s.Direction)
		flows := max(s.Flows, 1)
		for f := 0; f < flows; f++ {
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
				FrameSize: spec.FrameSize,
			})
			if err != nil {
				return res, fmt.Errorf("stream %d: %w", s.ID, err)
			}
			st.tpls = append(st.tpls, tpl)
		}
		if spec.BurstFrames > 0 {
			b := e.cfg.Batch
			if spec.RateFPS > 0 {
				b = min(b, pacedBatch)
			}
			st.pacer = Pacer{RateFPS: spec.RateFPS, Total: uint64(spec.BurstFrames), MaxBatch: b}
		} else if spec.RateFPS > 0 {
			st.pacer = NewDurationPacer(spec.RateFPS, spec.Duration, spec.RateChange, min(e.cfg.Batch, pacedBatch))
		} else {
			st.pacer = Pacer{MaxBatch: e.cfg.Batch} // unpaced, stopped by the hard stop
		}
		states[i] = st
		txStreams[from] = append(txStreams[from], st)
		rxStreams[to] = append(rxStreams[to], st)
	}

	// Receivers: filter for this run, attach.
	var rx [2]*rxTrial
	for i, p := range e.ports {
		if err := p.prepareTx(spec.FrameSize-framing.FCSLen, e.cfg.NoTxRing, e.cfg.QdiscPath); err != nil {
			return res, fmt.Errorf("%s: %w", p.where(), err)
		}
		if err := p.setFilter(runID); err != nil {
			return res, err
		}
		rx[i] = newRxTrial(runID, spec.FrameSize, rxStreams[i])
		if _, err := p.attach(rx[i]); err != nil {
			return res, fmt.Errorf("%s: %w", p.where(), err)
		}
	}
	var kdrops, linkDrops0, linkDrops [2]uint64
	var linkOK [2]bool
	for i, p := range e.ports {
		linkDrops0[i], linkOK[i] = p.linkRxDrops()
	}
	detach := func() error {
		var errs []error
		for i, p := range e.ports {
			st, err := p.attach(nil)
			errs = append(errs, err, p.setFilter(0))
			kdrops[i] += st.Drops
			if n, ok := p.linkRxDrops(); ok && linkOK[i] && n > linkDrops0[i] && len(rxStreams[i]) > 0 {
				linkDrops[i] = n - linkDrops0[i]
			}
		}
		return errors.Join(errs...)
	}

	// Traffic.
	var stop atomic.Bool
	stopCtx := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopCtx()
	pz := snapPause(e.ports)
	res.Start = time.Now()
	var txs [2]trialTx
	for i, p := range e.ports {
		if len(txStreams[i]) == 0 {
			continue
		}
		t := newTransmitter(p, txStreams[i], runID, e.cfg.Batch, &stop)
		t.tagAfter = spec.TagAfter
		t.cpu = e.cfg.TxCPU - 1
		t.hardStop = hardStop(spec)
		txs[i] = t
	}
	txErr := runTraffic(txs, states, rx, spec.Settle)
	derr := detach()

	// Results.
	res.Paths = e.pathsLocked()
	res.Paths.TxSched = lastTxSched()
	var lim limits
	var fc flowCheck
	press := txPressures(txs, &res, pz.since(e.ports))
	tol := e.cfg.TesterLimitTolerance
	kdropsAssigned := [2]bool{}
	for _, st := range states {
		intended := intendedFPS(st, spec)
		r := st.result(intended)
		to := 1 - sender(st.spec.Direction)
		if !kdropsAssigned[to] {
			// The link's rx_dropped may include the socket's own drops:
			// take the larger count, never the sum.
			r.KernelDrops = max(kdrops[to], linkDrops[to])
			kdropsAssigned[to] = true
		}
		res.Streams = append(res.Streams, r)
		if gt, gr := generatorReasons(st, r, intended, tol, e.cfg.MaxLag, stop.Load()); fc.add(sender(st.spec.Direction), r, gt, gr, press[sender(st.spec.Direction)], e.cfg.MaxLag) {
			lim.add(gt, gr)
		}
		if r.KernelDrops > 0 {
			lim.add(false, []string{fmt.Sprintf("port %s: the receiving side dropped %d frames in the kernel (socket %d, interface %s rx_dropped %d)",
				e.ports[to].name, r.KernelDrops, kdrops[to], e.ports[to].cfg.Interface, linkDrops[to])})
		}
	}
	// Calibrated ceiling: loss at or above what this tester can carry is
	// the tester's.
	var loads [2]float64
	for i, n := range perPort {
		loads[i] = rate * float64(n)
	}
	lim.add(false, ceilingReasons(e.cfg.CeilingFPS, spec.FrameSize, loads, res.LossPercent(), tol))
	fc.apply(&res, &lim, press, e.cfg.CeilingFPS, spec.FrameSize)
	lim.apply(&res)
	if txErr != nil {
		return res, fmt.Errorf("trial: %w", txErr)
	}
	if derr != nil {
		return res, fmt.Errorf("trial: read receive counters: %w", derr)
	}
	return res, ctx.Err()
}

// Generate sends frames on one interface without receiver or learning (the
// benchmark's generator-only mode). It uses the engine's transmit path.
func Generate(ctx context.Context, c GenConfig) (GenResult, error) {
	var res GenResult
	if c.Duration <= 0 {
		return res, fmt.Errorf("gen duration %v: must be positive, e.g. 5s", c.Duration)
	}
	if c.RateFPS < 0 {
		return res, fmt.Errorf("gen rate %g: must be 0 (full speed) or positive", c.RateFPS)
	}
	if len(c.DstMAC) != 6 {
		return res, fmt.Errorf("gen dst mac %q: want a 6-byte MAC", c.DstMAC)
	}
	if !c.AllowAnyDestination && (!benchNet4.Contains(c.DstIP) || !benchNet4.Contains(c.SrcIP)) {
		return res, fmt.Errorf("gen addresses %v -> %v: outside %v (RFC 6815)", c.SrcIP, c.DstIP, benchNet4)
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	p, err := openPort("gen", PortConfig{Namespace: c.Namespace, Interface: c.Interface}, Config{QdiscPath: c.QdiscPath}, true)
	if err != nil {
		return res, err
	}
	defer p.close()
	if err := p.prepareTx(c.FrameSize-framing.FCSLen, c.NoTxRing, c.QdiscPath); err != nil {
		return res, err
	}
	tpl, err := framing.NewTemplate(framing.TemplateConfig{SrcMAC: macOf(p.mac), DstMAC: c.DstMAC,
		SrcIP: c.SrcIP, DstIP: c.DstIP, DstPort: c.DstPort, FrameSize: c.FrameSize})
	if err != nil {
		return res, err
	}
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	st.tpls = []*framing.Template{tpl}
	if c.RateFPS > 0 {
		st.pacer = NewDurationPacer(c.RateFPS, c.Duration, nil, min(c.Batch, pacedBatch))
	} else {
		st.pacer = Pacer{MaxBatch: c.Batch}
	}
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	t := newTransmitter(p, []*streamState{st}, 1, c.Batch, &stop)
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

// Calibrate measures the tester's ceiling per frame size on a loop (port A
// connected to port B with nothing between, e.g. the lab's loop topology):
// for each size, A sends at full speed for d and B counts. The ceiling is
// the lower of the offered and received rates. Feed the points to
// Config.CeilingFPS (CeilingMap).
func Calibrate(ctx context.Context, cfg Config, sizes []int, d time.Duration) ([]CalibrationPoint, error) {
	if d <= 0 {
		return nil, fmt.Errorf("calibrate duration %v: must be positive, e.g. 2s", d)
	}
	e, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	var out []CalibrationPoint
	for _, f := range sizes {
		spec := Spec{FrameSize: f, Streams: []Stream{{ID: 1, Direction: AtoB}}, Duration: d, Settle: 200 * time.Millisecond}
		r, err := e.run(ctx, spec, true)
		if err != nil {
			return out, fmt.Errorf("calibrate %d bytes: %w", f, err)
		}
		s := r.Streams[0]
		pt := CalibrationPoint{FrameSize: f, OfferedFPS: s.OfferedFPS, KernelDrops: s.KernelDrops, Paths: r.Paths}
		if s.TxSeconds > 0 && s.Received > 1 {
			// Frames received over the same send window.
			pt.ReceivedFPS = float64(s.Received-1) / s.TxSeconds
		}
		pt.CeilingFPS = math.Min(pt.OfferedFPS, pt.ReceivedFPS)
		out = append(out, pt)
	}
	return out, nil
}
