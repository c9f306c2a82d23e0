//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/sys/unix"
)

// UDPEngine is the UDP transport: kernel UDP sockets on each side,
// optionally inside network namespaces. Frames of the RFC 2544 sizes become
// datagrams of framing.UDPPayloadSize bytes (F − 46 for IPv4, F − 66 for
// IPv6) carrying the same signature, counters, histograms and pacer as the
// raw engine. It needs no privileges unless a namespace is involved. Run is
// safe to call from several goroutines (calls queue).
type UDPEngine struct {
	cfg    UDPConfig
	mu     sync.Mutex
	runID  uint8
	sides  [2]*udpSide
	closed bool
	tsSeen atomic.Bool // a kernel receive timestamp was seen
}

// udpSide is one side's receive sockets (per family).
type udpSide struct {
	name string
	cfg  UDPPortConfig
	rx   [2]*udpReceiver // IPv4, IPv6; nil when the family is not configured
}

func (s *udpSide) where() string {
	if s.cfg.Namespace != "" {
		return fmt.Sprintf("udp port %s (netns %s)", s.name, s.cfg.Namespace)
	}
	return "udp port " + s.name
}

// OpenUDP opens the receive sockets of both sides (one per configured
// family, bound to Addr:Port and Addr6:Port). Send sockets are opened per
// trial, one per flow.
func OpenUDP(ctx context.Context, cfg UDPConfig) (*UDPEngine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("udp engine config: %w", err)
	}
	cfg = cfg.withDefaults()
	e := &UDPEngine{cfg: cfg}
	for i, pc := range []UDPPortConfig{cfg.A, cfg.B} {
		s := &udpSide{name: []string{"A", "B"}[i], cfg: pc}
		e.sides[i] = s
		for fam, a := range []netip.Addr{pc.Addr, pc.Addr6} {
			if !a.IsValid() {
				continue
			}
			r, err := openUDPReceiver(pc.Namespace, netip.AddrPortFrom(a, pc.Port), cfg.SocketBuffer)
			if err != nil {
				e.Close()
				return nil, fmt.Errorf("%s: %w", s.where(), err)
			}
			s.rx[fam] = r
		}
	}
	if err := ctx.Err(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close closes the receive sockets.
func (e *UDPEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, s := range e.sides {
		if s == nil {
			continue
		}
		for _, r := range s.rx {
			if r != nil {
				errs = append(errs, r.conn.Close())
			}
		}
	}
	return errors.Join(errs...)
}

// Paths reports the kernel paths of the UDP transport. A trial's
// Result.Paths.TX says "sendmmsg+udp_segment" when the kernel took UDP
// segmentation offload for the batches (one buffer per batch, split into
// datagrams below the UDP layer).
func (e *UDPEngine) Paths() Paths {
	p := Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}
	return p
}

// Run runs one trial (see Engine.Run). Before traffic, each send socket
// sends one unsigned datagram so the kernels on the path resolve their
// neighbors (RFC 2544 §23 learning frames), then the engine waits
// Spec.Learning, at least udpMinLearning.
func (e *UDPEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Spec: spec}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return res, errors.New("udp engine is closed")
	}
	proto, fam := framing.IPv4UDP, 0
	if spec.IPv6 {
		proto, fam = framing.IPv6UDP, 1
	}
	for _, s := range e.sides {
		if s.rx[fam] == nil {
			f := []string{"addr", "addr6"}[fam]
			return res, fmt.Errorf("trial ipv6=%v: %s has no %s; configure the tester's %v address on that side", spec.IPv6, s.where(), f, proto)
		}
	}
	if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, e.cfg.PathMTU); err != nil {
		return res, fmt.Errorf("trial frame_size (path MTU %d): %w", e.cfg.PathMTU, err)
	}
	var perPort [2]int
	for _, s := range spec.Streams {
		perPort[sender(s.Direction)]++
	}
	rate := max(spec.RateFPS, rateChangeFPS(spec))
	for i, n := range perPort {
		if e.cfg.MaxRateFPS > 0 && rate*float64(n) > e.cfg.MaxRateFPS {
			return res, fmt.Errorf("trial rate %.0f fps on udp port %s exceeds the safety cap max_rate_fps %.0f: lower the rate or raise the cap",
				rate*float64(n), e.sides[i].name, e.cfg.MaxRateFPS)
		}
	}
	e.runID++
	if e.runID == 0 {
		e.runID = 1
	}
	runID := e.runID
	payloadLen := framing.UDPPayloadSize(spec.FrameSize, proto, false)

	// Streams and their send sockets, one per flow.
	batch := e.cfg.Batch
	states := make([]*streamState, len(spec.Streams))
	var tx [2][]*udpStreamTx
	var rxStreams [2][]*streamState
	defer func() {
		for _, side := range tx {
			for _, st := range side {
				st.close()
			}
		}
	}()
	for i, s := range spec.Streams {
		st := newStreamState(s)
		from, to := sender(s.Direction), 1-sender(s.Direction)
		src := []netip.Addr{e.sides[from].cfg.Addr, e.sides[from].cfg.Addr6}[fam]
		dst := netip.AddrPortFrom([]netip.Addr{e.sides[to].cfg.Addr, e.sides[to].cfg.Addr6}[fam], e.sides[to].cfg.Port)
		stx := &udpStreamTx{st: st}
		tx[from] = append(tx[from], stx)
		for f := 0; f < max(s.Flows, 1); f++ {
			fl, err := openUDPFlow(e.sides[from].cfg.Namespace, src, dst, e.cfg.SocketBuffer, payloadLen, batch)
			if err != nil {
				return res, fmt.Errorf("stream %d flow %d on %s: %w", s.ID, f, e.sides[from].where(), err)
			}
			stx.flows = append(stx.flows, fl)
		}
		if spec.BurstFrames > 0 {
			st.pacer = Pacer{RateFPS: spec.RateFPS, Total: uint64(spec.BurstFrames), MaxBatch: batch}
		} else {
			st.pacer = NewDurationPacer(spec.RateFPS, spec.Duration, spec.RateChange, min(batch, pacedBatch))
		}
		states[i] = st
		rxStreams[to] = append(rxStreams[to], st)
	}

	// Learning: one unsigned datagram per flow, so ARP/ND is done before
	// the clock starts.
	for _, side := range tx {
		for _, st := range side {
			for _, fl := range st.flows {
				_, _ = fl.conn.Write(fl.learn)
			}
		}
	}
	if err := sleepCtx(ctx, max(spec.Learning, udpMinLearning)); err != nil {
		return res, err
	}

	// Receivers.
	var rx [2]*rxTrial
	var drops0 [2]uint64
	var rwg sync.WaitGroup
	for i, s := range e.sides {
		r := s.rx[fam]
		drops0[i] = r.drops()
		rx[i] = newRxTrial(runID, spec.FrameSize, rxStreams[i])
		if err := r.conn.SetReadDeadline(time.Time{}); err != nil {
			return res, fmt.Errorf("%s: %w", s.where(), err)
		}
		r.start(rx[i], payloadLen, e.cfg.RxCPU-1)
		rwg.Go(func() { r.run() })
	}

	// Traffic.
	var stop atomic.Bool
	stopCtx := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer stopCtx()
	res.Start = time.Now()
	var txs [2]trialTx
	for i := range e.sides {
		if len(tx[i]) == 0 {
			continue
		}
		txs[i] = &udpTransmitter{streams: tx[i], runID: runID, stop: &stop, tagAfter: spec.TagAfter, cpu: e.cfg.TxCPU - 1, where: e.sides[i].where(), hardStop: hardStop(spec)}
	}
	txErr := runTraffic(txs, states, rx, spec.Settle)
	var rerrs []error
	for _, s := range e.sides {
		rerrs = append(rerrs, s.rx[fam].conn.SetReadDeadline(time.Now()))
	}
	rwg.Wait()
	var kdrops [2]uint64
	for i, s := range e.sides {
		r := s.rx[fam]
		rerrs = append(rerrs, r.err)
		if len(rxStreams[i]) > 0 {
			// The socket's drop count (SO_MEMINFO) and the last
			// SO_RXQ_OVFL seen: the larger, never the sum.
			kdrops[i] = max(r.drops()-drops0[i], uint64(r.ovfl-r.ovfl0))
		}
	}
	if r := e.sides[1].rx[fam]; r.tsSeen || e.sides[0].rx[fam].tsSeen {
		e.tsSeen.Store(true)
	}

	// Results.
	res.Paths = e.Paths()
	res.Paths.TxSched = lastTxSched()
	for _, side := range tx {
		for _, st := range side {
			if len(st.flows) > 0 && st.flows[0].gso {
				res.Paths.TX = "sendmmsg+udp_segment"
			}
		}
	}
	if !e.tsSeen.Load() {
		res.Paths.Timestamps = "none"
	}
	var lim limits
	tol := e.cfg.TesterLimitTolerance
	assigned := [2]bool{}
	for _, st := range states {
		intended := intendedFPS(st, spec)
		r := st.result(intended)
		to := 1 - sender(st.spec.Direction)
		if !assigned[to] {
			r.KernelDrops = kdrops[to]
			assigned[to] = true
		}
		res.Streams = append(res.Streams, r)
		lim.add(generatorReasons(st, r, intended, tol, e.cfg.MaxLag, stop.Load()))
		if r.KernelDrops > 0 {
			lim.add(false, []string{fmt.Sprintf("%s: the receiving socket dropped %d datagrams in the kernel (receive queue overflow)",
				e.sides[to].where(), r.KernelDrops)})
		}
	}
	lim.apply(&res)
	if txErr != nil {
		return res, fmt.Errorf("trial: %w", txErr)
	}
	if err := errors.Join(rerrs...); err != nil {
		return res, fmt.Errorf("trial: receive: %w", err)
	}
	return res, ctx.Err()
}

// udpMinLearning is the least wait after the learning datagrams.
const udpMinLearning = 20 * time.Millisecond

// setBuf sets a socket buffer, forced past the system limit when permitted.
func setBuf(fd int, force, plain, n int) error {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, n) == nil {
		return nil
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, n)
}
