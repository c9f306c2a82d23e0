package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

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
	// Half holds the sockets' buffers and tester-limit rules, as an
	// agent's port has them; its Namespace is ignored (Local's is used).
	Half trials.RemotePort
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
	e       *trials.RemoteEngine
	reverse bool
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
	e, err := trials.NewRemote(trials.RemoteConfig{Local: cfg.Local, SocketBuffer: cfg.Half.SocketBuffer, Batch: cfg.Half.Batch,
		TesterLimitTolerance: cfg.Half.TesterLimitTolerance, MaxLag: cfg.Half.MaxLag, OneWay: cfg.Latency == LatencyOneWay}, remote{c: c, cfg: cfg})
	if err != nil {
		return nil, err
	}
	return &Tester{e: e, reverse: cfg.Reverse}, nil
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

// Run runs one trial across the two hosts.
func (t *Tester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if !t.reverse {
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
	res, err := t.e.Run(ctx, spec)
	if errors.Is(err, ErrAgentLost) {
		err = fmt.Errorf("%w: %w", ErrTrialInvalid, err)
	}
	return res, err
}

// remote is the agent as port B of a trials.RemoteEngine: the session's
// trial messages, the reflection the agent's policy leaves room for, and
// the run id both hosts derive from the trial id.
type remote struct {
	c   *Client
	cfg TesterConfig
}

var _ trials.Remote = remote{}

func (r remote) Addr() netip.Addr      { return r.c.RemoteAddr().Addr().Unmap() }
func (r remote) Done() <-chan struct{} { return r.c.Done() }
func (r remote) Err() error            { return r.c.Err() }

func (r remote) Setup(ctx context.Context, t trials.RemoteTrial) (trials.RemoteReady, error) {
	spec := t.Spec
	ab, ba := streamsOf(spec, trials.AtoB), streamsOf(spec, trials.BtoA)
	setup := wire.TrialSetup{TrialID: t.ID, Spec: spec, ControllerPort: t.Port, Latency: r.cfg.Latency}
	roundTrip := t.RoundTrip
	if roundTrip {
		setup.ReflectFPS = r.cfg.ReflectFPS
		if spec.RateFPS > 0 {
			setup.ReflectFPS = min(setup.ReflectFPS, spec.RateFPS*float64(len(ab)))
		}
		if len(ba) > 0 {
			setup.ReflectFPS = min(setup.ReflectFPS, BidirReflectShare*spec.RateFPS)
		}
		// What the agent's --max-rate leaves after its B->A streams.
		maxFPS := r.c.Info().MaxRateBps / (float64(spec.FrameSize+20) * 8)
		setup.ReflectFPS = min(setup.ReflectFPS, maxFPS-max(spec.RateFPS, rateChange(spec))*float64(len(ba)))
		if setup.ReflectFPS <= 0 {
			if spec.TagAfter > 0 {
				// A latency trial would measure nothing: say why, before traffic.
				return trials.RemoteReady{}, fmt.Errorf("round-trip latency: the agent's --max-rate (%.4g bit/s) leaves no room to reflect frames beside its B->A traffic at %.0f fps; "+
					"raise the agent's --max-rate above the trial's rate, lower this run's --max-rate, or measure latency without --bidir or with --clock-sync ptp",
					r.c.Info().MaxRateBps, spec.RateFPS*float64(len(ba)))
			}
			setup.ReflectFPS, roundTrip = 0, false
		}
	}
	ready, err := r.c.Setup(ctx, setup)
	if err != nil {
		return trials.RemoteReady{}, err
	}
	return trials.RemoteReady{Port: ready.AgentPort, RunID: wire.RunID(t.ID), Reflect: roundTrip, Length: wire.TrialLength(setup)}, nil
}

func (r remote) Start(ctx context.Context, id uint64) error { return r.c.Start(ctx, id) }

func (r remote) Stop(ctx context.Context, id uint64, sent []trials.StreamResult) (trials.RemoteResult, error) {
	var ws []wire.StreamSent
	if sent != nil {
		ws = []wire.StreamSent{}
	}
	for _, s := range sent {
		ws = append(ws, wire.StreamSent{ID: s.ID, Sent: s.Sent})
	}
	res, err := r.c.Stop(ctx, id, ws)
	return trials.RemoteResult{Streams: res.Streams, TesterLimited: res.TesterLimited, TesterLimitReason: res.TesterLimitReason,
		TesterLimitTransient: res.TesterLimitTransient, Reflected: res.Reflected, Paths: res.Paths}, err
}

func streamsOf(s trials.Spec, d trials.Direction) []trials.Stream {
	return (Trial{Spec: s}).Streams(d)
}

func rateChange(s trials.Spec) float64 {
	if s.RateChange != nil {
		return s.RateChange.RateFPS
	}
	return 0
}
