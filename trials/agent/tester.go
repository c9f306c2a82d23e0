package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// TesterConfig configures the controller's Tester.
type TesterConfig struct {
	// Local is the controller's side (tester port A): the receive socket
	// binds to Addr (or Addr6 for IPv6 trials) and Port (zero:
	// trials.DefaultUDPPort), and A->B streams are sent from that address.
	// Addr must be the address the agent sees the control connection come
	// from: the agent sends only there.
	Local trials.UDPPortConfig
	// Half holds the sockets' buffers and tester-limit rules.
	Half trials.UDPHalfConfig
	// Latency is the latency mode; empty means LatencyRoundTrip.
	// LatencyOneWay needs an agent started with --clock-sync ptp.
	Latency LatencyMode
	// ReflectFPS caps the frames the agent reflects for round-trip
	// latency, in frames per second; zero means DefaultReflectFPS. They
	// travel B->A and load that direction of the path a little, so in
	// trials that also send B->A streams (bidirectional) at most
	// BidirReflectShare of the trial's rate is reflected.
	ReflectFPS float64
	// Reverse runs every trial's streams B->A only (--reverse): the agent
	// sends, the controller receives. A->B streams of the Spec are sent
	// B->A instead; the Result's Spec is the one given, its streams say
	// B->A.
	Reverse bool
}

// DefaultReflectFPS is the default cap on reflected frames: 1000 per second.
const DefaultReflectFPS = 1000

// BidirReflectShare caps reflection in trials with B->A streams, as a share
// of the trial's rate: 0.2 %, so the reflected frames do not move a
// bidirectional throughput search (measured: 1000 fps of reflection made a
// 50 Mbit/s bidirectional search 3.4 % lower than the local run).
const BidirReflectShare = 0.002

// ErrTrialInvalid marks a trial that cannot be judged: the agent was lost
// during it. It is never loss in the device under test.
var ErrTrialInvalid = errors.New("trial invalid: agent lost — not DUT loss")

// Tester runs trials across two hosts: the controller's local UDP port A and
// a remote agent as port B, driven by a Client. A->B streams are a local
// sender and the agent's receiver; B->A streams the agent's sender and a
// local receiver; a bidirectional trial both. It implements rfc2544.Tester.
//
// An agent lost during a trial (ErrAgentLost) makes Run fail with an error
// matching both ErrTrialInvalid and ErrAgentLost; the trial is not retried,
// since the session is gone: the rfc2544 runner stops with that message,
// and the user restarts the agent and the run.
type Tester struct {
	c   *Client
	cfg TesterConfig
	mu  sync.Mutex
	id  uint64
}

// NewTester returns a Tester for the session c. The agent sends only to the
// control connection's source address, so cfg.Local's address must be it
// (the one the agent reported as PeerAddr).
func NewTester(c *Client, cfg TesterConfig) (*Tester, error) {
	if cfg.Latency == "" {
		cfg.Latency = LatencyRoundTrip
	}
	if cfg.ReflectFPS <= 0 {
		cfg.ReflectFPS = DefaultReflectFPS
	}
	if cfg.Local.Port == 0 {
		cfg.Local.Port = trials.DefaultUDPPort
	}
	if cfg.Local.Port < MinControllerPort {
		return nil, fmt.Errorf("local udp port %d: the agent sends only to ports %d and above; pick one from %d up", cfg.Local.Port, MinControllerPort, MinControllerPort)
	}
	if cfg.Latency == LatencyOneWay && c.Info().ClockSync != ClockPTP {
		return nil, fmt.Errorf("latency one-way: the agent's clock is not declared synchronized (clock_sync %q); measure round trip, or start the agent with --clock-sync ptp", c.Info().ClockSync)
	}
	peer := c.LocalAddr().Addr().Unmap()
	if a := cfg.Local.Addr; a.IsValid() && peer.Is4() && a != peer {
		return nil, fmt.Errorf("local addr %v: the control connection leaves from %v, the only address the agent sends to; give --local %v or reach the agent by a route that leaves from %v", a, peer, peer, a)
	}
	if a := cfg.Local.Addr6; a.IsValid() && peer.Is6() && a != peer {
		return nil, fmt.Errorf("local addr6 %v: the control connection leaves from %v, the only address the agent sends to", a, peer)
	}
	if !cfg.Local.Addr.IsValid() && peer.Is4() {
		cfg.Local.Addr = peer
	}
	if !cfg.Local.Addr6.IsValid() && peer.Is6() {
		cfg.Local.Addr6 = peer
	}
	cfg.Half.Namespace = cfg.Local.Namespace
	return &Tester{c: c, cfg: cfg}, nil
}

// LocalAddr is the control connection's local address: the address the
// agent sends test traffic to.
func (c *Client) LocalAddr() netip.AddrPort {
	a, _ := c.c.nc.LocalAddr().(*net.TCPAddr)
	if a == nil {
		return netip.AddrPort{}
	}
	return a.AddrPort()
}

// RemoteAddr is the agent's address on the control connection; test
// traffic to the agent goes to this address.
func (c *Client) RemoteAddr() netip.AddrPort {
	a, _ := c.c.nc.RemoteAddr().(*net.TCPAddr)
	if a == nil {
		return netip.AddrPort{}
	}
	return a.AddrPort()
}

func streamsOf(s trials.Spec, d trials.Direction) []trials.Stream {
	return (Trial{Spec: s}).Streams(d)
}

// Run runs one trial across the two hosts.
func (t *Tester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if !t.cfg.Reverse {
		return t.run(ctx, spec)
	}
	rev := spec
	rev.Streams = nil
	for _, s := range spec.Streams {
		s.Direction = trials.BtoA
		rev.Streams = append(rev.Streams, s)
	}
	res, err := t.run(ctx, rev)
	res.Spec = spec
	return res, err
}

func (t *Tester) run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	res := trials.Result{Spec: spec}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.id++
	id := t.id
	runID := wire.RunID(id)
	local, agentAddr := t.cfg.Local.Addr, t.c.RemoteAddr().Addr().Unmap()
	if spec.IPv6 {
		local = t.cfg.Local.Addr6
	}
	if !local.IsValid() || agentAddr.Is6() != spec.IPv6 {
		return res, fmt.Errorf("trial ipv6=%v: the agent is reached at %v; for this family connect to the agent's address of that family", spec.IPv6, agentAddr)
	}
	ab, ba := streamsOf(spec, trials.AtoB), streamsOf(spec, trials.BtoA)
	setup := wire.TrialSetup{TrialID: id, Spec: spec, ControllerPort: t.cfg.Local.Port, Latency: t.cfg.Latency}
	roundTrip := t.cfg.Latency == LatencyRoundTrip && len(ab) > 0
	if roundTrip {
		setup.ReflectFPS = t.cfg.ReflectFPS
		if spec.RateFPS > 0 {
			setup.ReflectFPS = min(setup.ReflectFPS, spec.RateFPS*float64(len(ab)))
		}
		if len(ba) > 0 {
			setup.ReflectFPS = min(setup.ReflectFPS, BidirReflectShare*spec.RateFPS)
		}
		// What the agent's --max-rate leaves after its B->A streams.
		maxFPS := t.c.Info().MaxRateBps / (float64(spec.FrameSize+20) * 8)
		setup.ReflectFPS = min(setup.ReflectFPS, maxFPS-max(spec.RateFPS, rateChange(spec))*float64(len(ba)))
		if setup.ReflectFPS <= 0 {
			if spec.TagAfter > 0 {
				// A latency trial would measure nothing: say why, before traffic.
				return res, fmt.Errorf("round-trip latency: the agent's --max-rate (%.4g bit/s) leaves no room to reflect frames beside its B->A traffic at %.0f fps; "+
					"raise the agent's --max-rate above the trial's rate, lower this run's --max-rate, or measure latency without --bidir or with --clock-sync ptp",
					t.c.Info().MaxRateBps, spec.RateFPS*float64(len(ba)))
			}
			setup.ReflectFPS, roundTrip = 0, false
		}
	}
	lost := func(err error) error {
		if errors.Is(err, ErrAgentLost) {
			return fmt.Errorf("%w: %w", ErrTrialInvalid, err)
		}
		return err
	}

	// The receiver for B->A streams and reflected frames.
	var tx *trials.UDPSend
	var rx *trials.UDPReceive
	openRx := func() error {
		if len(ba) == 0 && !roundTrip {
			return nil
		}
		opt := trials.UDPReceiveOptions{Listen: netip.AddrPortFrom(local, t.cfg.Local.Port), From: agentAddr, Tx: tx}
		if roundTrip {
			opt.RoundTrip = ab
		}
		var err error
		rx, err = trials.StartUDPReceive(t.cfg.Half, spec, runID, ba, opt)
		return err
	}
	ready, err := t.c.Setup(ctx, setup)
	if err != nil {
		return res, lost(fmt.Errorf("agent trial setup: %w", err))
	}
	abort := func(err error) (trials.Result, error) {
		if tx != nil {
			tx.Stop()
		}
		if rx != nil {
			rx.Stop(nil)
		}
		if !errors.Is(err, ErrAgentLost) {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			t.c.Stop(sctx, id, nil)
			cancel()
		}
		return res, lost(err)
	}
	// The A->B sender (it sends after its learning wait, by which time
	// the agent has started too), opened before the receiver so that the
	// receiver knows which frame it tags.
	sendCtx, cancelSend := context.WithCancel(ctx)
	defer cancelSend()
	start := func() error {
		if len(ab) == 0 {
			return nil
		}
		var err error
		tx, err = trials.StartUDPSend(sendCtx, t.cfg.Half, spec, runID, ab, trials.UDPSendOptions{
			Src: local, Dst: netip.AddrPortFrom(agentAddr, ready.AgentPort)})
		return err
	}
	if err := start(); err != nil {
		return abort(fmt.Errorf("local sender: %w", err))
	}
	if err := openRx(); err != nil {
		return abort(fmt.Errorf("local receiver: %w", err))
	}
	if err := t.c.Start(ctx, id); err != nil {
		return abort(fmt.Errorf("agent trial start: %w", err))
	}
	res.Start = time.Now()
	// spec.OnInterval from this host's halves; a failed trial ends
	// without a final interval.
	ivs := trials.StartHalfIntervals(spec, res.Start, tx, rx)
	defer ivs.Stop()
	length := wire.TrialLength(setup) + 20*time.Millisecond // learning floor of the UDP senders
	// Wait for the local sender and the agent's planned end, then settle.
	timer := time.NewTimer(length)
	defer timer.Stop()
	var txDone <-chan struct{}
	if tx != nil {
		txDone = tx.Done()
	}
	for txDone != nil || timer.C != nil {
		select {
		case <-txDone:
			txDone = nil
		case <-timer.C:
			timer.C = nil
		case <-t.c.Done():
			return abort(fmt.Errorf("agent trial %d: %w", id, t.c.Err()))
		case <-ctx.Done():
			return abort(ctx.Err())
		}
	}
	select {
	case <-time.After(spec.Settle + trials.LateGrace):
	case <-t.c.Done():
		return abort(fmt.Errorf("agent trial %d: %w", id, t.c.Err()))
	case <-ctx.Done():
		return abort(ctx.Err())
	}

	var mine trials.Result
	mine.Spec = spec
	var sent []wire.StreamSent
	txByID := map[uint16]trials.StreamResult{}
	if tx != nil {
		sr, err := tx.Stop()
		if err != nil {
			return abort(fmt.Errorf("local sender: %w", err))
		}
		for _, s := range sr.Streams {
			txByID[s.ID] = s
			sent = append(sent, wire.StreamSent{ID: s.ID, Sent: s.Sent})
		}
		if sr.TesterLimitReason != "" {
			mine.TesterLimited, mine.TesterLimitReason = true, sr.TesterLimitReason
		}
	}
	if sent == nil {
		sent = []wire.StreamSent{}
	}
	remote, err := t.c.Stop(ctx, id, sent)
	if err != nil {
		tx = nil
		return abort(fmt.Errorf("agent trial stop: %w", err))
	}
	rxByID := map[uint16]trials.StreamResult{}
	rttByID := map[uint16]trials.StreamResult{}
	mine.Paths = trials.Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}
	if rx != nil {
		counts := map[uint16]uint64{}
		for _, r := range remote.Streams {
			if r.Direction == trials.BtoA {
				counts[r.ID] = r.Sent
			}
		}
		rr, err := rx.Stop(counts)
		if err != nil {
			return res, fmt.Errorf("local receiver: %w", err)
		}
		for _, s := range rr.Streams {
			rxByID[s.ID] = s
		}
		for _, s := range rr.RoundTrip {
			rttByID[s.ID] = s
		}
		mine.Paths.Timestamps = rr.Paths.Timestamps
		if rr.KernelDrops > 0 && len(ba) > 0 {
			mine.TesterLimited = true
			mine.TesterLimitReason = joinNonEmpty(mine.TesterLimitReason, fmt.Sprintf("controller: the receiving socket dropped %d datagrams in the kernel", rr.KernelDrops))
		}
	}
	for _, s := range spec.Streams {
		var r trials.StreamResult
		if s.Direction == trials.AtoB {
			r = txByID[s.ID]
			r.Latency, r.TaggedLatencyNs = trials.LatencySummary{}, -1
			if rt, ok := rttByID[s.ID]; ok {
				r.Latency, r.TaggedLatencyNs = rt.Latency, rt.TaggedLatencyNs
				r.Trend = roundTripTrend(rt.Trend)
			}
		} else {
			r = rxByID[s.ID]
		}
		r.ID, r.Direction = s.ID, s.Direction
		mine.Streams = append(mine.Streams, r)
	}
	if roundTrip {
		mine.Paths.Latency = "round-trip"
	} else if t.cfg.Latency == LatencyOneWay {
		mine.Paths.Latency = "one-way"
	}
	out, err := mergeResults(t.cfg.Latency, mine, remote)
	out.Start = res.Start
	if err != nil {
		return out, err
	}
	// The agent's generator lag of B->A streams, and the catch-up rule of
	// package trials for every stream, which needs the loss only the
	// controller knows.
	maxLag := t.cfg.Half.MaxLag
	if maxLag <= 0 {
		maxLag = trials.DefaultMaxLag
	}
	var reasons []string
	for i, s := range out.Streams {
		if s.Direction == trials.BtoA {
			for _, r := range remote.Streams {
				if r.ID == s.ID {
					out.Streams[i].MaxLagNs = r.MaxLagNs
					out.Streams[i].CatchUpOverspeed = r.CatchUpOverspeed
					out.Streams[i].CatchUpBurstFrames = r.CatchUpBurstFrames
				}
			}
		}
		who := "controller: "
		if s.Direction == trials.BtoA {
			who = "agent: "
		}
		if why := trials.StallReason(out.Streams[i], maxLag); why != "" {
			reasons = append(reasons, who+why)
		}
	}
	if len(reasons) > 0 {
		// Transient only when the stalls are the trial's sole tester limits.
		out.TesterLimitTransient = !out.TesterLimited
		out.TesterLimited = true
	}
	for _, r := range reasons {
		out.TesterLimitReason = joinNonEmpty(out.TesterLimitReason, r)
	}
	ivs.Finish(out)
	return out, nil
}

func rateChange(s trials.Spec) float64 {
	if s.RateChange != nil {
		return s.RateChange.RateFPS
	}
	return 0
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// roundTripTrend is the latency trend of a stream's reflected frames, for
// the sustained-rate verdict (trials.Result.Sustained): without it a queue
// that grew through a forward trial in round-trip mode went unseen, and a
// search through a DUT with a 1000-frame queue passed 104 % of its rate
// (TestAgentMatchesLocalShaped). The round trip crosses the A->B queue, so
// its growth shows; the reflected frames are a sample at a capped rate (a
// token bucket in time, not every k-th frame), so their count says nothing
// of the rate the DUT forwarded: ForwardedFPS is cleared, and the verdict
// estimates that rate from the slope.
func roundTripTrend(t *trials.LatencyTrend) *trials.LatencyTrend {
	if t == nil {
		return nil
	}
	c := *t
	c.ForwardedFPS = 0
	return &c
}
