package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// openTester opens the tester of a checked setup: the simulator, or the raw
// engine on two ports (creating a temporary lab first when asked). Tests
// replace it to count or forbid trials.
var openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
	switch s.transport {
	case transportSim:
		return openSim(s, logw), nil
	case transportRaw, transportUDP, transportXDP:
		if s.agent != nil {
			return openAgent(ctx, s, logw)
		}
		return openRaw(ctx, s, logw)
	}
	return openedTester{}, fmt.Errorf("transport %q: not implemented", s.transport)
}

// simDUT is the simulated DUT of --transport sim (rfc2544.NewSimRouter),
// changed by the --sim-* flags.
func simDUT(s *runSetup) *rfc2544.SimDUT {
	return rfc2544.NewSimRouter(s.plan.LinkBps, s.flags.simCapacity, s.flags.simMTU)
}

func openSim(s *runSetup, logw io.Writer) openedTester {
	d := simDUT(s)
	desc := fmt.Sprintf("simulated DUT (not a measurement): forwards %s per direction, %d KiB buffer, %v latency + up to %v jitter, path MTU %d",
		formatBitRate(d.CapacityBps), d.BufferBytes>>10, d.BaseLatency, d.Jitter, d.MaxFrameSize-framing.EthHeaderLen-framing.FCSLen)
	fmt.Fprintf(logw, "transport sim: %s; trials are computed, not sent\n", desc)
	return openedTester{
		tester: d,
		dut: rfc2544.DUTInfo{Description: desc, Settings: map[string]string{
			"capacity_bps": fmt.Sprint(d.CapacityBps),
			"buffer_bytes": fmt.Sprint(d.BufferBytes),
			"mtu":          fmt.Sprint(d.MaxFrameSize - framing.EthHeaderLen - framing.FCSLen),
		}},
		close: func() {},
	}
}

// openRaw opens the raw engine (or, with --transport udp, the UDP engine:
// kernel sockets in the ports' namespaces) on the setup's ports, creating a
// temporary lab first when asked. On error everything it made is removed.
func openRaw(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
	ports := s.ports
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
	if s.tempLab {
		name := s.labCfg.Name
		fmt.Fprintf(logw, "creating temporary lab %s (%s)\n", name, s.labCfg.Summary())
		// Registered before Up: Down clears a half-built lab too. It is
		// also an exit hook, so a second Ctrl-C removes the lab before it
		// ends the process.
		cleanups = append(cleanups, onExit(func() {
			if err := lab.Down(name); err != nil {
				fmt.Fprintf(logw, "rfc2544: removing temporary lab %s failed: %v; remove it with 'rfc2544 lab down --name %s'\n", name, err, name)
				return
			}
			fmt.Fprintf(logw, "removed temporary lab %s\n", name)
		}))
		st, err := lab.Up(ctx, s.labCfg)
		if err != nil {
			cleanup()
			return openedTester{}, fmt.Errorf("create temporary lab %s: %w", name, err)
		}
		ports = labPorts(st)
		dut = rfc2544.DUTInfo{Description: st.Description(true), Settings: st.Settings()}
		pathMTU = min(st.A.MTU, st.B.MTU)
		txCPU = st.TesterCPU()
		qdiscPath = st.TesterQdisc
	} else if s.labName != "" {
		st, err := lab.Load(s.labName)
		if err != nil {
			return openedTester{}, fmt.Errorf("--lab %s: %w", s.labName, err)
		}
		dut = rfc2544.DUTInfo{Description: st.Description(false), Settings: st.Settings()}
		pathMTU = min(st.A.MTU, st.B.MTU)
		txCPU = st.TesterCPU()
		qdiscPath = st.TesterQdisc
	}
	if txCPU > 0 {
		fmt.Fprintf(logw, "sending threads on CPU %d, off the lab DUT's CPUs\n", txCPU-1)
	}
	for _, p := range ports {
		fmt.Fprintf(logw, "%s\n", p.describe())
	}
	if err := checkDestinations(ports, s.flags.allowAny); err != nil {
		cleanup()
		return openedTester{}, err
	}
	if s.transport == transportUDP {
		ucfg := trials.UDPConfig{
			A:                   udpPort(ports[0]),
			B:                   udpPort(ports[1]),
			PathMTU:             pathMTU,
			MaxRateFPS:          framing.LineRateFPS(s.capBps, framing.MinEthernetFrame),
			AllowAnyDestination: s.flags.allowAny,
			TxCPU:               txCPU,
		}
		ueng, err := openUDPEngine(ctx, ucfg)
		if err != nil {
			cleanup()
			return openedTester{}, fmt.Errorf("open the udp engine: %w", err)
		}
		cleanups = append(cleanups, func() { ueng.Close() })
		return openedTester{tester: ueng, dut: dut, close: cleanup}, nil
	}
	cfg := trials.Config{
		A:                   enginePort(ports[0]),
		B:                   enginePort(ports[1]),
		MaxRateFPS:          framing.LineRateFPS(s.capBps, framing.MinEthernetFrame),
		AllowAnyDestination: s.flags.allowAny,
		TxCPU:               txCPU,
		QdiscPath:           qdiscPath, // a lab's tester queue (lab.State.TesterQdisc)
	}
	if len(s.ceilings) > 0 {
		cfg.CeilingFPS = trials.CeilingMap(s.ceilings)
	}
	if s.transport == transportXDP {
		xeng, err := openXDPEngine(ctx, cfg)
		if err != nil {
			cleanup()
			return openedTester{}, fmt.Errorf("open the xdp engine: %w", err)
		}
		fmt.Fprintf(logw, "transport xdp: %s\n", xeng.Paths().XDP)
		cleanups = append(cleanups, func() { xeng.Close() })
		return openedTester{tester: xeng, dut: dut, close: cleanup}, nil
	}
	eng, err := openEngine(ctx, cfg)
	if err != nil {
		cleanup()
		return openedTester{}, fmt.Errorf("open the raw engine: %w", err)
	}
	cleanups = append(cleanups, func() { eng.Close() })
	return openedTester{tester: eng, dut: dut, close: cleanup}, nil
}

// udpPort maps a port to the UDP transport: its namespace and addresses
// (the interface and gateway are the kernel's business).
func udpPort(p portConfig) trials.UDPPortConfig {
	return trials.UDPPortConfig{Namespace: p.netns, Addr: p.addr.Addr(), Addr6: p.addr6.Addr()}
}

func enginePort(p portConfig) trials.PortConfig {
	return trials.PortConfig{Namespace: p.netns, Interface: p.iface, Addr: p.addr, Gateway: p.gateway, Addr6: p.addr6, Gateway6: p.gateway6}
}
