package rig

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// Transports.
const (
	Raw = "raw" // AF_PACKET on two ports (trials.Open)
	UDP = "udp" // kernel UDP sockets (trials.OpenUDP), or a remote agent
	XDP = "xdp" // AF_XDP on two ports (trials.OpenXDP)
	Sim = "sim" // the simulated DUT (rfc2544.NewSimRouter): nothing is sent
)

// NominalLineRate is the line rate percentages refer to on a veth (a lab),
// the simulator, or the udp transport between two addresses, which have no
// line rate of their own: 1 Gbit/s.
const NominalLineRate = 1e9

// Engine is a traffic engine as a run uses it.
type Engine interface {
	rfc2544.Tester
	Close() error
}

// Config says which tester to open and where. Exactly one of Ports, LabName,
// TempLab and Agent gives the ports (none for Sim).
type Config struct {
	Transport string // Raw, UDP, XDP or Sim; "" is Raw (Auto: Choose first)
	// Auto says --transport auto chose Transport (Choice.Auto): an xdp
	// engine that cannot open on the ports falls back to raw, and Why says
	// how the transport was chosen.
	Auto    bool
	Why     string
	Ports   []Port // two checked ports (ParsePort, ParseUDPPort)
	LabName string // an existing lab (lab.Up)
	// TempLab is a lab to create first and remove at Close (also when
	// Open fails).
	TempLab *lab.Config
	Agent   *Agent // port B is a remote agent (Transport UDP)

	// CapBps is the rate cap per port in L1 bit/s, always in force:
	// trials refuse any stream above it. Zero: no cap beyond the Runner's.
	CapBps              float64
	AllowAnyDestination bool // test addresses outside RFC 6815's ranges
	// Ceilings are the tester's measured limits (Raw or XDP, measured on
	// the same transport: ReadCalibration): a trial at or above one that
	// loses frames is tester-limited.
	Ceilings      []trials.CalibrationPoint
	Bidirectional bool // for the agent's description of the traffic
	// Queues is the xdp transport's queues per port (trials.Config.Queues;
	// 0: one). A TempLab gets veths with at least as many queues.
	Queues int

	// The simulator (Sim): LinkBps its line rate, SimCapacityBps its
	// forwarding rate (0: 80 % of LinkBps), SimMTU its path MTU (0: 1500).
	LinkBps        float64
	SimCapacityBps float64
	SimMTU         int

	// Log gets what Open and Close do (nil: discarded).
	Log io.Writer
	// AtExit, when set, registers a temporary lab's removal to run also
	// if the process is ended first, and returns the function that runs
	// it once (the command's second Ctrl-C). Nil: removal at Close only.
	AtExit func(func()) func()
	// OpenRaw replaces trials.Open and OpenXDP trials.OpenXDP (tests);
	// nil is the trials function.
	OpenRaw func(context.Context, trials.Config) (Engine, error)
	OpenXDP func(context.Context, trials.Config) (Engine, error)
}

// Tester is an opened tester: Tester runs the trials, DUT describes the
// device under test for the results, Transport is the transport that runs
// them and Why how it was chosen (Config.Why, or why auto fell back).
type Tester struct {
	rfc2544.Tester
	DUT       rfc2544.DUTInfo
	Transport string
	Why       string
	// Lab is the lab the tester runs on (nil on other ports), for its
	// truth (LabTruth).
	Lab   *lab.Config
	close func()
}

// LabTruth is the truth of a lab's DUT for the plan (lab.Config.TruthAtoB
// per frame size on the plan's line): none for a bidirectional plan, whose
// rates are both directions' sums.
func LabTruth(c *lab.Config, p rfc2544.Plan) []rfc2544.TruthPoint {
	if c == nil || p.Bidirectional {
		return nil
	}
	var pts []rfc2544.TruthPoint
	for _, f := range p.FrameSizes {
		if t, ok := c.TruthAtoB(f, p.LinkBps); ok {
			pts = append(pts, rfc2544.TruthPoint{FrameSize: f, ThroughputFPS: t.ThroughputFPS, BackToBackFrames: t.BackToBackFrames})
		}
	}
	return pts
}

// Close releases the tester and removes a temporary lab, reporting it on
// Config.Log.
func (t *Tester) Close() {
	if t != nil && t.close != nil {
		t.close()
	}
}

// Open opens the tester of cfg: the simulator, an engine on two ports
// (creating a temporary lab first when asked), or the agent's two-host
// tester. On error everything it made is removed.
func Open(ctx context.Context, cfg Config) (*Tester, error) {
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	switch cfg.Transport {
	case Auto:
		return nil, errors.New("rig.Open: transport auto: resolve it with rig.Choose first")
	case Sim:
		return openSim(cfg, logw), nil
	case Raw, "", UDP, XDP:
		if cfg.Agent != nil {
			return openAgent(ctx, cfg.Agent, cfg, logw)
		}
		return openEngine(ctx, cfg, logw)
	}
	return nil, fmt.Errorf("transport %q: not implemented", cfg.Transport)
}

// SimDUT is the simulated DUT of a Sim config (rfc2544.NewSimRouter).
func SimDUT(cfg Config) *rfc2544.SimDUT {
	return rfc2544.NewSimRouter(cfg.LinkBps, cfg.SimCapacityBps, cfg.SimMTU)
}

func openSim(cfg Config, logw io.Writer) *Tester {
	d := SimDUT(cfg)
	mtu := d.MaxFrameSize - framing.EthHeaderLen - framing.FCSLen
	desc := fmt.Sprintf("simulated DUT (not a measurement): forwards %s per direction, %d KiB buffer, %v latency + up to %v jitter, path MTU %d",
		rate.Format(d.CapacityBps), d.BufferBytes>>10, d.BaseLatency, d.Jitter, mtu)
	fmt.Fprintf(logw, "transport sim: %s; trials are computed, not sent\n", desc)
	return &Tester{Tester: d, Transport: Sim, Why: cfg.Why, DUT: rfc2544.DUTInfo{Description: desc, Settings: map[string]string{
		"capacity_bps": fmt.Sprint(d.CapacityBps),
		"buffer_bytes": fmt.Sprint(d.BufferBytes),
		"mtu":          fmt.Sprint(mtu),
	}}}
}

// openEngine opens the raw, udp or xdp engine on the config's ports,
// creating a temporary lab first when asked.
func openEngine(ctx context.Context, cfg Config, logw io.Writer) (*Tester, error) {
	ports := cfg.Ports
	dut := rfc2544.DUTInfo{}
	pathMTU := 0       // the udp transport's path MTU; 0 = 1500
	txCPU := 0         // sending threads' CPU, 1-based; 0 = not pinned
	qdiscPath := false // go through a lab's tester queue (lab.State.TesterQdisc)
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(err error) (*Tester, error) {
		cleanup()
		return nil, err
	}
	var labCfg *lab.Config
	useLab := func(st *lab.State, created bool) {
		labCfg = &st.Config
		ports = LabPorts(st)
		dut = rfc2544.DUTInfo{Description: st.Description(created), Settings: st.Settings()}
		pathMTU = min(st.A.MTU, st.B.MTU)
		txCPU = st.TesterCPU()
		qdiscPath = st.TesterQdisc
	}
	if lc := cfg.TempLab; lc != nil {
		if cfg.Queues > lc.Queues {
			c := *lc
			c.Queues = cfg.Queues // veths with a queue for each of the xdp transport's
			lc = &c
		}
		name := lc.Name
		fmt.Fprintf(logw, "creating temporary lab %s (%s)\n", name, lc.Summary())
		remove := func() {
			if err := lab.Down(name); err != nil {
				fmt.Fprintf(logw, "rfc2544: removing temporary lab %s failed: %v; remove it with 'rfc2544 lab down --name %s'\n", name, err, name)
				return
			}
			fmt.Fprintf(logw, "removed temporary lab %s\n", name)
		}
		// Registered before Up: Down clears a half-built lab too.
		if cfg.AtExit != nil {
			remove = cfg.AtExit(remove)
		}
		cleanups = append(cleanups, remove)
		st, err := lab.Up(ctx, *lc)
		if err != nil {
			return fail(fmt.Errorf("create temporary lab %s: %w", name, err))
		}
		useLab(st, true)
	} else if cfg.LabName != "" {
		st, err := lab.Load(cfg.LabName)
		if err != nil {
			return nil, fmt.Errorf("--lab %s: %w", cfg.LabName, err)
		}
		useLab(st, false)
	}
	if len(ports) != 2 {
		return fail(fmt.Errorf("%d ports: a run needs two (port A and port B)", len(ports)))
	}
	if txCPU > 0 {
		fmt.Fprintf(logw, "sending threads on CPU %d, off the lab DUT's CPUs\n", txCPU-1)
	}
	for _, p := range ports {
		fmt.Fprintf(logw, "%s\n", p)
	}
	if err := CheckDestinations(ports, cfg.AllowAnyDestination); err != nil {
		return fail(err)
	}
	maxFPS := framing.LineRateFPS(cfg.CapBps, framing.MinEthernetFrame)
	var eng Engine
	var err error
	transport, why := transportName(cfg.Transport), cfg.Why
	switch cfg.Transport {
	case UDP:
		eng, err = trials.OpenUDP(ctx, trials.UDPConfig{
			A:                   udpPort(ports[0]),
			B:                   udpPort(ports[1]),
			PathMTU:             pathMTU,
			MaxRateFPS:          maxFPS,
			AllowAnyDestination: cfg.AllowAnyDestination,
			TxCPU:               txCPU,
		})
	default:
		tc := trials.Config{
			A:                   ports[0].Engine(),
			B:                   ports[1].Engine(),
			MaxRateFPS:          maxFPS,
			AllowAnyDestination: cfg.AllowAnyDestination,
			TxCPU:               txCPU,
			QdiscPath:           qdiscPath, // a lab's tester queue (lab.State.TesterQdisc)
			Queues:              cfg.Queues,
		}
		if len(cfg.Ceilings) > 0 {
			tc.CeilingFPS = trials.CeilingMap(cfg.Ceilings)
		}
		if cfg.Transport == XDP {
			if eng, err = openXDP(ctx, cfg, tc, logw); err == nil || !cfg.Auto || !errors.Is(err, trials.ErrNotSupported) {
				break
			}
			// auto chose xdp, and these ports cannot run it: raw can.
			transport, why = Raw, fmt.Sprintf("auto: the xdp transport does not open on these ports (%v)", err)
		}
		eng, err = openRaw(ctx, cfg, tc, logw)
	}
	if cfg.Auto {
		fmt.Fprintf(logw, "transport %s, chosen by %s\n", transport, why)
	}
	if err != nil {
		if errors.Is(err, trials.ErrNotSupported) {
			// The transport cannot run on these ports: name the flag.
			flag := "--transport " + transport
			if cfg.Auto {
				flag = "--transport auto (" + transport + ")"
			}
			return fail(fmt.Errorf("%s: open the %s engine: %w", flag, transport, err))
		}
		return fail(fmt.Errorf("open the %s engine: %w", transport, err))
	}
	cleanups = append(cleanups, func() { eng.Close() })
	return &Tester{Tester: eng, DUT: dut, Transport: transport, Why: why, Lab: labCfg, close: cleanup}, nil
}

// openXDP opens the xdp engine (Config.OpenXDP or trials.OpenXDP) and logs
// the AF_XDP mode that runs.
func openXDP(ctx context.Context, cfg Config, tc trials.Config, logw io.Writer) (Engine, error) {
	if cfg.OpenXDP != nil {
		return cfg.OpenXDP(ctx, tc)
	}
	x, err := trials.OpenXDP(ctx, tc)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "transport xdp: %s\n", x.Paths().XDP)
	return x, nil
}

// openRaw opens the raw engine (Config.OpenRaw or trials.Open) and logs the
// ports' pause-frame warnings.
func openRaw(ctx context.Context, cfg Config, tc trials.Config, logw io.Writer) (Engine, error) {
	if cfg.OpenRaw != nil {
		return cfg.OpenRaw(ctx, tc)
	}
	e, err := trials.Open(ctx, tc)
	if err != nil {
		return nil, err
	}
	for _, w := range e.PauseWarnings() {
		fmt.Fprintln(logw, "rfc2544: warning:", w)
	}
	return e, nil
}

// udpPort maps a port to the UDP transport: its namespace and addresses
// (the interface and gateway are the kernel's business).
func udpPort(p Port) trials.UDPPortConfig {
	return trials.UDPPortConfig{Namespace: p.Netns, Addr: p.Addr.Addr(), Addr6: p.Addr6.Addr()}
}

// Engine is the port as the raw and xdp engines take it.
func (p Port) Engine() trials.PortConfig {
	return trials.PortConfig{Namespace: p.Netns, Interface: p.Interface, Addr: p.Addr, Gateway: p.Gateway, Addr6: p.Addr6, Gateway6: p.Gateway6}
}
