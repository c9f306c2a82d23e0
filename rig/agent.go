package rig

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
)

// AgentInput is a remote agent as typed: --agent HOST[:PORT], --token-file,
// --local, --clock-sync and --reverse, with --netns-a (the namespace this
// side's sockets live in), --ipv6 and --allow-any-destination.
type AgentInput struct {
	Addr, TokenFile, Local, ClockSync string
	Reverse, IPv6, AllowAny           bool
	Netns                             string
}

// Agent is a checked remote agent: port B of a two-host run.
type Agent struct {
	Addr    netip.AddrPort // the agent's control address
	Token   []byte
	Local   netip.Addr // invalid: the route's source address
	Netns   string     // the namespace this side's sockets live in
	Latency agent.LatencyMode
	Reverse bool // send only B->A
}

// ParseAgent checks a remote agent before anything is sent: the address
// (an IP literal, in the RFC 6815 ranges unless AllowAny), the token file,
// the clock mode and Local. It returns the agent and the run's two ports
// (A this host, B the agent; socket-only).
func ParseAgent(in AgentInput) (*Agent, []Port, error) {
	host, port := in.Addr, agent.DefaultPort
	if h, p, err := net.SplitHostPort(in.Addr); err == nil {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return nil, nil, inputf("--agent %s: port %q: want 1 to 65535 (default %d)", in.Addr, p, agent.DefaultPort)
		}
		host, port = h, int(n)
	}
	ip, err := netip.ParseAddr(trimBracket(host))
	if err != nil {
		return nil, nil, inputf("--agent %s: want the agent's IP address, optionally with :PORT, e.g. 198.19.1.2 or [2001:2:0:2::2]:2544", in.Addr)
	}
	ip = ip.Unmap()
	if ip.Is6() != in.IPv6 {
		return nil, nil, inputf("--agent %s: an %s address, but the test frames are %s; the control connection and the test traffic share the agent's address: give its %s address%s",
			in.Addr, famName(ip.Is6()), famName(in.IPv6), famName(in.IPv6), map[bool]string{false: " or pass --ipv6", true: ""}[in.IPv6])
	}
	if !in.AllowAny && !ip.IsLoopback() && !trials.InBenchmarkRange(ip) {
		return nil, nil, outsideBenchmark("--agent "+in.Addr, "")
	}
	t := &Agent{Addr: netip.AddrPortFrom(ip, uint16(port)), Netns: in.Netns, Reverse: in.Reverse}
	if in.TokenFile == "" {
		return nil, nil, inputf("--agent: --token-file FILE is required (the agent's token, copied to this host with mode 600)")
	}
	if t.Token, err = agent.LoadToken(in.TokenFile); err != nil {
		return nil, nil, inputf("--token-file: %v", err)
	}
	switch agent.ClockSync(in.ClockSync) {
	case agent.ClockNone, "":
		t.Latency = agent.LatencyRoundTrip
	case agent.ClockPTP:
		t.Latency = agent.LatencyOneWay
	default:
		return nil, nil, inputf("--clock-sync %q: want none (round-trip latency) or ptp (both hosts' clocks are PTP-synchronized: one-way latency)", in.ClockSync)
	}
	if in.Local != "" {
		if t.Local, err = netip.ParseAddr(in.Local); err != nil || t.Local.Is6() != ip.Is6() {
			return nil, nil, inputf("--local %q: want this host's %s test address, e.g. %s", in.Local, famName(ip.Is6()), map[bool]string{false: "198.18.1.2", true: "2001:2:0:1::2"}[ip.Is6()])
		}
	}
	pa := Port{Side: "a", Netns: in.Netns, SocketOnly: true}
	pb := Port{Side: "b", SocketOnly: true}
	if ip.Is6() {
		pb.Addr6 = netip.PrefixFrom(ip, 128)
		if t.Local.IsValid() {
			pa.Addr6 = netip.PrefixFrom(t.Local, 128)
		}
	} else {
		pb.Addr = netip.PrefixFrom(ip, 32)
		if t.Local.IsValid() {
			pa.Addr = netip.PrefixFrom(t.Local, 32)
		}
	}
	return t, []Port{pa, pb}, nil
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

// openAgent connects to the agent (from its Netns when given) and returns
// the two-host Tester.
func openAgent(ctx context.Context, t *Agent, cfg Config, logw io.Writer) (*Tester, error) {
	var c *agent.Client
	err := nsutil.Do(t.Netns, func() (err error) {
		c, err = agent.Dial(ctx, t.Addr.String(), t.Token, agent.DialConfig{Software: "rfc2544"})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("--agent %s: %w", t.Addr, err)
	}
	info := c.Info()
	latency := "round trip (the agent reflects frames; its clock is not declared synchronized)"
	switch {
	case t.Latency == agent.LatencyOneWay:
		latency = "one way each way (--clock-sync ptp: both clocks declared PTP-synchronized)"
	case info.ClockSync == agent.ClockPTP:
		latency = "round trip (one-way is possible: the agent declares PTP-synchronized clocks; pass --clock-sync ptp)"
	}
	fmt.Fprintf(logw, "agent %s: %s, sends to %s only, max rate %s, max trial %v; latency %s\n",
		t.Addr, info.Software, info.PeerAddr, rate.Format(info.MaxRateBps), time.Duration(info.MaxDuration), latency)
	local := c.LocalAddr().Addr().Unmap()
	if t.Local.IsValid() && t.Local != local {
		c.Close()
		return nil, inputf("--local %v: the connection to the agent leaves from %v, the only address the agent sends to; drop --local or route the agent's address through %v", t.Local, local, t.Local)
	}
	if !cfg.AllowAnyDestination && !local.IsLoopback() && !trials.InBenchmarkRange(local) {
		c.Close()
		return nil, inputf("this host's address toward the agent, %v: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 (RFC 6815); route the agent's address through the test network, or pass --allow-any-destination", local)
	}
	lc := trials.UDPPortConfig{Namespace: t.Netns, Addr: local}
	if local.Is6() {
		lc = trials.UDPPortConfig{Namespace: t.Netns, Addr6: local}
	}
	tr, err := agent.NewTester(c, agent.TesterConfig{Local: lc, Reverse: t.Reverse, Latency: t.Latency})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("--agent %s: %w", t.Addr, err)
	}
	dir := "A->B (this host sends, the agent receives)"
	switch {
	case t.Reverse:
		dir = "B->A only (--reverse: the agent sends, this host receives)"
	case cfg.Bidirectional:
		dir = "both ways (--bidir)"
	}
	fmt.Fprintf(logw, "port A: this host %v (udp %d); port B: agent %v; traffic %s\n", local, trials.DefaultUDPPort, t.Addr.Addr(), dir)
	dut := rfc2544.DUTInfo{Description: fmt.Sprintf("the path between this host (%v) and the agent at %v", local, t.Addr.Addr()),
		Settings: map[string]string{"agent": t.Addr.String(), "local": local.String(), "latency": string(t.Latency), "direction": dir}}
	return &Tester{Tester: tr, DUT: dut, Transport: UDP, Why: cfg.Why, close: func() { c.Close() }}, nil
}
