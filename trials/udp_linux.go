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
	"github.com/rfc2544/rfc2544/internal/wait"
	"golang.org/x/sys/unix"
)

// UDPEngine is the UDP transport: kernel UDP sockets on each side,
// optionally inside network namespaces. Frames of the RFC 2544 sizes become
// datagrams of framing.UDPPayloadSize bytes (F − 46 for IPv4, F − 66 for
// IPv6) carrying the same signature, counters, histograms and pacer as the
// raw engine. It needs no privileges unless a namespace is involved. Run is
// safe to call from several goroutines (calls queue).
type UDPEngine struct {
	engineState
	cfg    UDPConfig
	sides  [2]*udpSide
	trial  *udpTrial
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
	e := &UDPEngine{cfg: cfg, engineState: engineState{name: "udp engine"}}
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
	return e.closeOnce(func() (errs []error) {
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
		return errs
	})
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
	return runTransport(ctx, e, spec, false)
}

// udpTrial is the UDP transport's per-trial state.
type udpTrial struct {
	fam        int // 0 IPv4, 1 IPv6
	payloadLen int // the largest frame's, for a mix
	proto      framing.Proto
	tx         [2][]*udpStreamTx // per sending side, in the order of the spec's streams
	drops0     [2]uint64
	rwg        sync.WaitGroup
	press      [2]*TxPressure // each sending side's back-pressure measurements
	fc         flowCheck
}

var _ transport = (*UDPEngine)(nil)

func (e *UDPEngine) engine() *engineState { return &e.engineState }

func (e *UDPEngine) rules() trialRules {
	return trialRules{maxRateFPS: e.cfg.MaxRateFPS, tol: e.cfg.TesterLimitTolerance, maxLag: e.cfg.MaxLag, batch: e.cfg.Batch}
}

func (e *UDPEngine) portName(i int) string { return "udp port " + e.sides[i].name }

func (e *UDPEngine) prepare(spec Spec) error {
	e.trial = &udpTrial{}
	proto := framing.IPv4UDP
	if spec.IPv6 {
		proto, e.trial.fam = framing.IPv6UDP, 1
	}
	for _, s := range e.sides {
		if s.rx[e.trial.fam] == nil {
			f := []string{"addr", "addr6"}[e.trial.fam]
			return fmt.Errorf("trial ipv6=%v: %s has no %s; configure the tester's %v address on that side", spec.IPv6, s.where(), f, proto)
		}
	}
	if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, e.cfg.PathMTU); err != nil {
		return fmt.Errorf("trial frame_size (path MTU %d): %w", e.cfg.PathMTU, err)
	}
	e.trial.payloadLen = framing.UDPPayloadSize(framing.LargestFrame(spec.FrameSize), proto, false)
	e.trial.proto = proto
	return nil
}

func (e *UDPEngine) learn(context.Context, Spec) error { return nil }

// stream opens st's send sockets, one per flow.
func (e *UDPEngine) stream(st *streamState, from, to int, spec Spec) error {
	fam := e.trial.fam
	src := []netip.Addr{e.sides[from].cfg.Addr, e.sides[from].cfg.Addr6}[fam]
	dst := netip.AddrPortFrom([]netip.Addr{e.sides[to].cfg.Addr, e.sides[to].cfg.Addr6}[fam], e.sides[to].cfg.Port)
	stx := &udpStreamTx{st: st}
	e.trial.tx[from] = append(e.trial.tx[from], stx)
	if m, ok := framing.MixOf(spec.FrameSize); ok {
		for _, f := range m.Pattern() {
			stx.lens = append(stx.lens, framing.UDPPayloadSize(f, e.trial.proto, false))
		}
	}
	for f := 0; f < max(st.spec.Flows, 1); f++ {
		fl, err := openUDPFlow(e.sides[from].cfg.Namespace, src, dst, e.cfg.SocketBuffer, e.trial.payloadLen, e.cfg.Batch)
		if err != nil {
			return fmt.Errorf("stream %d flow %d on %s: %w", st.spec.ID, f, e.sides[from].where(), err)
		}
		if stx.lens != nil {
			fl.gso = false // segmentation offload cuts one size only
		}
		stx.flows = append(stx.flows, fl)
	}
	return nil
}

// ready sends the learning datagrams, one unsigned datagram per flow, so
// ARP/ND is done before the clock starts, and waits.
func (e *UDPEngine) ready(ctx context.Context, spec Spec) error {
	for _, side := range e.trial.tx {
		for _, st := range side {
			for _, fl := range st.flows {
				_, _ = fl.conn.Write(fl.learn)
			}
		}
	}
	return wait.Sleep(ctx, max(spec.Learning, udpMinLearning))
}

func (e *UDPEngine) receive(runID uint8, spec Spec, rx [2]*rxTrial) error {
	for i, s := range e.sides {
		r := s.rx[e.trial.fam]
		e.trial.drops0[i] = r.drops()
		if err := r.conn.SetReadDeadline(time.Time{}); err != nil {
			return fmt.Errorf("%s: %w", s.where(), err)
		}
		rx[i].useMixPayload(spec.FrameSize, e.trial.proto)
		r.start(rx[i], e.trial.payloadLen, e.cfg.RxCPU-1)
		e.trial.rwg.Go(func() { r.run() })
	}
	return nil
}

func (e *UDPEngine) sender(i int, _ []*streamState, runID uint8, spec Spec, stop *atomic.Bool) trialTx {
	return &udpTransmitter{streams: e.trial.tx[i], runID: runID, stop: stop, tagAfter: spec.TagAfter, cpu: e.cfg.TxCPU - 1, where: e.sides[i].where(), hardStop: hardStop(spec)}
}

// stopReceive stops the receive loops (a read deadline now); a side's drops
// are the larger of the socket's drop count (SO_MEMINFO) and the last
// SO_RXQ_OVFL seen, never the sum.
func (e *UDPEngine) stopReceive(rxStreams [2][]*streamState) (drops [2]uint64, err error) {
	fam := e.trial.fam
	var rerrs []error
	for _, s := range e.sides {
		rerrs = append(rerrs, s.rx[fam].conn.SetReadDeadline(time.Now()))
	}
	e.trial.rwg.Wait()
	for i, s := range e.sides {
		r := s.rx[fam]
		rerrs = append(rerrs, r.err)
		if len(rxStreams[i]) > 0 {
			drops[i] = max(r.drops()-e.trial.drops0[i], uint64(r.ovfl-r.ovfl0))
		}
	}
	if r := e.sides[1].rx[fam]; r.tsSeen || e.sides[0].rx[fam].tsSeen {
		e.tsSeen.Store(true)
	}
	if err := errors.Join(rerrs...); err != nil {
		return drops, fmt.Errorf("receive: %w", err)
	}
	return drops, nil
}

func (e *UDPEngine) collect(res *Result, txs [2]trialTx) {
	res.Paths = e.Paths()
	for _, side := range e.trial.tx {
		for _, st := range side {
			if len(st.flows) > 0 && st.flows[0].gso {
				res.Paths.TX = "sendmmsg+udp_segment"
			}
		}
	}
	if !e.tsSeen.Load() {
		res.Paths.Timestamps = "none"
	}
	for i, tx := range txs {
		t, ok := tx.(*udpTransmitter)
		if !ok || t == nil {
			continue
		}
		p := t.press.p
		p.Port, p.SendBuffer = e.sides[i].name, true
		res.TxPressure = append(res.TxPressure, p)
		e.trial.press[i] = &res.TxPressure[len(res.TxPressure)-1]
	}
}

// passOn applies the raw transport's back-pressure rule (flowCheck.add): a
// sender the path held back (waiting for send-buffer room while it had time
// to spare) is flow-controlled, not tester-limited.
func (e *UDPEngine) passOn(port int, r StreamResult, transient bool, reasons []string) bool {
	return e.trial.fc.add(port, r, transient, reasons, e.trial.press[port], e.cfg.MaxLag)
}

func (e *UDPEngine) dropReason(i int, n uint64) string {
	return fmt.Sprintf("%s: the receiving socket dropped %d datagrams in the kernel (receive queue overflow)", e.sides[i].where(), n)
}

// judge applies the back-pressure verdict (the UDP transport has no
// calibrated ceiling).
func (e *UDPEngine) judge(res *Result, lim *limits, spec Spec, _ [2]float64) {
	e.trial.fc.apply(res, lim, e.trial.press, nil, spec.FrameSize)
}

// release closes the trial's send sockets.
func (e *UDPEngine) release() {
	if e.trial == nil {
		return
	}
	for _, side := range e.trial.tx {
		for _, st := range side {
			st.close()
		}
	}
	e.trial = nil
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
