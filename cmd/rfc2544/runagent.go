package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
)

// agentFlags are run's flags for a two-host test with a remote agent as
// port B: --agent HOST[:PORT] --token-file F [--local ADDR] [--reverse].
type agentFlags struct {
	addr, tokenFile, local, clockSync string
	reverse                           bool
}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.addr, "agent", "", "run against the remote agent ('rfc2544 agent') at `HOST[:PORT]` (an IP address; port 2544 if omitted) as port B; implies --transport udp")
	fs.StringVar(&a.tokenFile, "token-file", "", "with --agent: the shared token `FILE` (mode 600, as the agent's)")
	fs.StringVar(&a.local, "local", "", "with --agent: this host's test `address` (port A); default the address the route to the agent leaves from")
	fs.BoolVar(&a.reverse, "reverse", false, "with --agent: send only B->A (the agent sends, this host receives)")
	fs.StringVar(&a.clockSync, "clock-sync", "none", "with --agent: `none` (round-trip latency: the agent reflects tagged frames) or ptp (the hosts' clocks are PTP-synchronized: one-way latency each way; the agent must run with --clock-sync ptp too)")
}

// agentTarget is a checked --agent setup.
type agentTarget struct {
	addr  netip.AddrPort // the agent's control address
	token []byte
	local netip.Addr // invalid: the route's source address
	netns string     // --netns-a: the namespace this side's sockets live in
	// latency is the latency mode --clock-sync asks for.
	latency agent.LatencyMode
}

// setupAgent checks the --agent flags before anything is sent: the
// address (an IP literal, in the RFC 6815 ranges unless
// --allow-any-destination), the token file, --local, and flags that mean
// nothing with an agent.
func setupAgent(f *runFlags, set map[string]bool) (*agentTarget, []portConfig, error) {
	a := f.agentF
	if a.addr == "" {
		for _, n := range []string{"token-file", "local", "reverse", "clock-sync"} {
			if set[n] {
				return nil, nil, usagef("--%s: applies to a run with a remote agent; add --agent HOST[:PORT]", n)
			}
		}
		return nil, nil, nil
	}
	if f.transport != "" && f.transport != transportUDP {
		return nil, nil, usagef("--agent with --transport %s: a run with a remote agent uses the udp transport; drop --transport", f.transport)
	}
	if f.lab.set || f.portA.iface != "" || f.portB.iface != "" || f.portB.addr != "" || f.portB.addr6 != "" || f.portA.addr != "" {
		return nil, nil, usagef("--agent: the agent is port B and --local this host's address; drop --lab, --port-a/--port-b and --addr-a/--addr-b")
	}
	if set["calibration"] {
		return nil, nil, usagef("--calibration: tester ceilings apply to the raw transport; drop it with --agent")
	}
	host, port := a.addr, agent.DefaultPort
	if h, p, err := net.SplitHostPort(a.addr); err == nil {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return nil, nil, usagef("--agent %s: port %q: want 1 to 65535 (default %d)", a.addr, p, agent.DefaultPort)
		}
		host, port = h, int(n)
	}
	ip, err := netip.ParseAddr(trimBracket(host))
	if err != nil {
		return nil, nil, usagef("--agent %s: want the agent's IP address, optionally with :PORT, e.g. 198.19.1.2 or [2001:2:0:2::2]:2544", a.addr)
	}
	ip = ip.Unmap()
	if ip.Is6() != f.ipv6 {
		return nil, nil, usagef("--agent %s: an %s address, but the test frames are %s; the control connection and the test traffic share the agent's address: give its %s address%s",
			a.addr, famName(ip.Is6()), famName(f.ipv6), famName(f.ipv6), map[bool]string{false: " or pass --ipv6", true: ""}[f.ipv6])
	}
	if !f.allowAny && !ip.IsLoopback() && !trials.InBenchmarkRange(ip) {
		return nil, nil, usagef("--agent %s: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 that RFC 6815 asks test traffic to stay in; "+
			"renumber the test network into them, or pass --allow-any-destination if this network is isolated and you accept the risk", a.addr)
	}
	t := &agentTarget{addr: netip.AddrPortFrom(ip, uint16(port)), netns: f.portA.netns}
	if a.tokenFile == "" {
		return nil, nil, usagef("--agent: --token-file FILE is required (the agent's token, copied to this host with mode 600)")
	}
	if t.token, err = agent.LoadToken(a.tokenFile); err != nil {
		return nil, nil, usagef("--token-file: %v", err)
	}
	switch agent.ClockSync(a.clockSync) {
	case agent.ClockNone:
		t.latency = agent.LatencyRoundTrip
	case agent.ClockPTP:
		t.latency = agent.LatencyOneWay
	default:
		return nil, nil, usagef("--clock-sync %q: want none (round-trip latency) or ptp (both hosts' clocks are PTP-synchronized: one-way latency)", a.clockSync)
	}
	if a.local != "" {
		if t.local, err = netip.ParseAddr(a.local); err != nil || t.local.Is6() != ip.Is6() {
			return nil, nil, usagef("--local %q: want this host's %s test address, e.g. %s", a.local, famName(ip.Is6()), map[bool]string{false: "198.18.1.2", true: "2001:2:0:1::2"}[ip.Is6()])
		}
	}
	pa := portConfig{name: "a", netns: f.portA.netns, socketOnly: true}
	pb := portConfig{name: "b", socketOnly: true}
	if ip.Is6() {
		pb.addr6 = netip.PrefixFrom(ip, 128)
		if t.local.IsValid() {
			pa.addr6 = netip.PrefixFrom(t.local, 128)
		}
	} else {
		pb.addr = netip.PrefixFrom(ip, 32)
		if t.local.IsValid() {
			pa.addr = netip.PrefixFrom(t.local, 32)
		}
	}
	return t, []portConfig{pa, pb}, nil
}

func famName(v6 bool) string {
	if v6 {
		return "IPv6"
	}
	return "IPv4"
}

func trimBracket(s string) string {
	if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

// openAgent connects to the agent (from --netns-a's namespace when given)
// and returns the two-host Tester.
func openAgent(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
	t := s.agent
	var c *agent.Client
	err := nsutil.Do(t.netns, func() (err error) {
		c, err = agent.Dial(ctx, t.addr.String(), t.token, agent.DialConfig{Software: "rfc2544"})
		return err
	})
	if err != nil {
		return openedTester{}, fmt.Errorf("--agent %s: %w", t.addr, err)
	}
	info := c.Info()
	latency := "round trip (the agent reflects frames; its clock is not declared synchronized)"
	switch {
	case t.latency == agent.LatencyOneWay:
		latency = "one way each way (--clock-sync ptp: both clocks declared PTP-synchronized)"
	case info.ClockSync == agent.ClockPTP:
		latency = "round trip (one-way is possible: the agent declares PTP-synchronized clocks; pass --clock-sync ptp)"
	}
	fmt.Fprintf(logw, "agent %s: %s, sends to %s only, max rate %s, max trial %v; latency %s\n",
		t.addr, info.Software, info.PeerAddr, formatBitRate(info.MaxRateBps), time.Duration(info.MaxDuration), latency)
	local := c.LocalAddr().Addr().Unmap()
	if t.local.IsValid() && t.local != local {
		c.Close()
		return openedTester{}, usagef("--local %v: the connection to the agent leaves from %v, the only address the agent sends to; drop --local or route the agent's address through %v", t.local, local, t.local)
	}
	if !s.flags.allowAny && !local.IsLoopback() && !trials.InBenchmarkRange(local) {
		c.Close()
		return openedTester{}, usagef("this host's address toward the agent, %v: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 (RFC 6815); route the agent's address through the test network, or pass --allow-any-destination", local)
	}
	lc := trials.UDPPortConfig{Namespace: t.netns, Addr: local}
	if local.Is6() {
		lc = trials.UDPPortConfig{Namespace: t.netns, Addr6: local}
	}
	tr, err := agent.NewTester(c, agent.TesterConfig{Local: lc, Reverse: s.flags.agentF.reverse, Latency: t.latency})
	if err != nil {
		c.Close()
		return openedTester{}, fmt.Errorf("--agent %s: %w", t.addr, err)
	}
	dir := "A->B (this host sends, the agent receives)"
	switch {
	case s.flags.agentF.reverse:
		dir = "B->A only (--reverse: the agent sends, this host receives)"
	case s.plan.Bidirectional:
		dir = "both ways (--bidir)"
	}
	fmt.Fprintf(logw, "port A: this host %v (udp %d); port B: agent %v; traffic %s\n", local, trials.DefaultUDPPort, t.addr.Addr(), dir)
	dut := rfc2544.DUTInfo{Description: fmt.Sprintf("the path between this host (%v) and the agent at %v", local, t.addr.Addr()),
		Settings: map[string]string{"agent": t.addr.String(), "local": local.String(), "latency": string(t.latency), "direction": dir}}
	return openedTester{tester: tr, dut: dut, close: func() { c.Close() }}, nil
}
