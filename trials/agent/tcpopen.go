package agent

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// TCPOpen is what OpenTCPTester needs: the agent's control address, the
// token, and this side's namespace and direction.
type TCPOpen struct {
	// Addr is the agent's control address, HOST:PORT.
	Addr  string
	Token []byte
	// Namespace holds this side's sockets ("" for this one's).
	Namespace string
	// Reverse makes the agent the sender.
	Reverse bool
	// Both says the test runs both ways at once (RunTCPTestBoth, which
	// ignores Reverse).
	Both bool
	// AllowAnyDestination permits this host's address toward the agent
	// outside the benchmark ranges (RFC 6815).
	AllowAnyDestination bool
}

// OpenTCPTester connects to the agent (from o.Namespace), says on logw what
// the agent allows, and returns the RFC 6349 tester of the session; Close
// its Client when done.
func OpenTCPTester(ctx context.Context, o TCPOpen, logw io.Writer) (*TCPTester, error) {
	var c *Client
	if err := nsutil.Do(o.Namespace, func() (err error) {
		c, err = Dial(ctx, o.Addr, o.Token, DialConfig{Software: "rfc2544 tcp"})
		return err
	}); err != nil {
		return nil, fmt.Errorf("--agent %s: %w", o.Addr, err)
	}
	local := c.LocalAddr().Addr().Unmap()
	if !o.AllowAnyDestination && !local.IsLoopback() && !trials.InBenchmarkRange(local) {
		c.Close()
		return nil, fmt.Errorf("this host's address toward the agent, %v: outside the benchmark ranges 198.18.0.0/15 and 2001:2::/48 (RFC 6815); route the agent's address through the test network, or pass --allow-any-destination", local)
	}
	info := c.Info()
	dir := "to the agent"
	switch {
	case o.Both:
		dir = "to and from the agent at once (--both)"
	case o.Reverse:
		dir = "from the agent (--reverse)"
	}
	fmt.Fprintf(logw, "agent %s (%q): accepts tcp from %s only, max rate %.6g Mbit/s, max transfer %v; tcp %s\n",
		o.Addr, info.Software, info.PeerAddr, info.MaxRateBps/1e6, time.Duration(info.MaxDuration), dir)
	return &TCPTester{Client: c, Namespace: o.Namespace, Reverse: o.Reverse}, nil
}

// UDPTester is the session's UDP tester (port A this host, port B the
// agent), for the bottleneck bandwidth search
// (rfc2544.BottleneckByThroughput), in the transfer's direction.
func (t *TCPTester) UDPTester() (*Tester, error) {
	local := t.Client.LocalAddr().Addr().Unmap()
	lc := trials.UDPPortConfig{Namespace: t.Namespace, Addr: local}
	if local.Is6() {
		lc = trials.UDPPortConfig{Namespace: t.Namespace, Addr6: local}
	}
	return NewTester(t.Client, TesterConfig{Local: lc, Reverse: t.Reverse})
}

// AddrIsIPv6 reports whether an agent address (HOST or HOST:PORT, HOST an
// IP literal, IPv6 in brackets with a port) is IPv6; false when it is not
// an IP address (the caller's parser says why).
func AddrIsIPv6(s string) bool {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().Is6()
	}
	a, err := netip.ParseAddr(trimBrackets(s))
	return err == nil && a.Unmap().Is6()
}

// RunTCPTest runs the RFC 6349 test against the agent of o: it connects,
// finds the bottleneck bandwidth with the UDP throughput search through the
// agent unless plan gives it (bb.LinkBps zero means the agent's --max-rate),
// and runs the steps (rfc2544.RunTCPTest) in o's direction.
func RunTCPTest(ctx context.Context, o TCPOpen, plan rfc2544.TCPPlan, bb rfc2544.TCPBottleneckConfig, logw io.Writer) (rfc2544.TCPResult, error) {
	tt, err := OpenTCPTester(ctx, o, logw)
	if err != nil {
		return rfc2544.TCPResult{Plan: plan}, err
	}
	defer tt.Client.Close()
	if plan, err = tt.bottleneck(ctx, plan, bb, logw); err != nil {
		return rfc2544.TCPResult{Plan: plan}, err
	}
	return rfc2544.RunTCPTest(ctx, tt, plan)
}

// RunTCPTestBoth runs the RFC 6349 test against the agent of o in both
// directions at once (rfc2544.RunTCPTestBoth: each direction's idle RTT
// and windows first, then both transfers together over one session), each
// against its own bottleneck: plan's when it gives one, else the UDP
// throughput search through the agent in that direction. The results are
// to the agent, then from it.
func RunTCPTestBoth(ctx context.Context, o TCPOpen, plan rfc2544.TCPPlan, bb rfc2544.TCPBottleneckConfig, logw io.Writer) ([2]rfc2544.TCPResult, error) {
	o.Reverse, o.Both = false, true
	res := [2]rfc2544.TCPResult{{Plan: plan}, {Plan: plan}}
	to, err := OpenTCPTester(ctx, o, logw)
	if err != nil {
		return res, err
	}
	defer to.Client.Close()
	from := &TCPTester{Client: to.Client, Namespace: to.Namespace, Reverse: true, SampleEvery: to.SampleEvery}
	var plans [2]rfc2544.TCPPlan
	for i, tt := range []*TCPTester{to, from} {
		if plans[i], err = tt.bottleneck(ctx, plan, bb, logw); err != nil {
			res[i].Plan = plans[i]
			return res, err
		}
	}
	res, err = rfc2544.RunTCPTestBoth(ctx, [2]rfc2544.TCPTester{to, from}, plans)
	here, there := to.Client.LocalAddr().Addr().Unmap(), to.Client.RemoteAddr().Addr().Unmap()
	res[0].Direction = fmt.Sprintf("%v -> agent %v, both directions at once", here, there)
	res[1].Direction = fmt.Sprintf("agent %v -> %v, both directions at once", there, here)
	return res, err
}

// bottleneck returns plan with its bottleneck bandwidth: as given, or found
// by the UDP throughput search through the agent in t's direction (up to
// bb.LinkBps, zero meaning the agent's --max-rate). It logs the direction's
// test on logw.
func (t *TCPTester) bottleneck(ctx context.Context, plan rfc2544.TCPPlan, bb rfc2544.TCPBottleneckConfig, logw io.Writer) (rfc2544.TCPPlan, error) {
	dir := "to the agent"
	if t.Reverse {
		dir = "from the agent"
	}
	if plan.BottleneckBps == 0 {
		if bb.LinkBps == 0 {
			bb.LinkBps = t.Client.Info().MaxRateBps
		}
		udp, err := t.UDPTester()
		if err != nil {
			return plan, err
		}
		fmt.Fprintf(logw, "tcp: bottleneck bandwidth %s: UDP throughput search through the agent, up to %.6g Mbit/s\n", dir, bb.LinkBps/1e6)
		plan.BottleneckBps, plan.BottleneckSource, err = rfc2544.BottleneckByThroughput(ctx, udp, bb)
		if err != nil {
			return plan, err
		}
	}
	fmt.Fprintf(logw, "tcp: %v <-> agent %v, %s, bottleneck %.6g Mbit/s (%s), %v transfer\n", t.Client.LocalAddr().Addr(), t.Client.RemoteAddr().Addr(),
		dir, plan.BottleneckBps/1e6, plan.BottleneckSource, plan.Duration.D())
	return plan, nil
}

// CheckTCPPlan checks a given window and number of connections against
// what an agent takes (wire.MaxTCPWindow, wire.MaxTCPStreams,
// wire.MaxTCPWindowTotal, for the two transfers together when both runs
// them at once), before any connection; zero is "from the BDP". The error
// names the flag and the fix.
func CheckTCPPlan(windowBytes, streams int, both bool) error {
	total := int64(windowBytes) * int64(max(streams, 1))
	switch {
	case streams > wire.MaxTCPStreams:
		return fmt.Errorf("tcp --streams %d: an agent takes at most %d connections per transfer", streams, wire.MaxTCPStreams)
	case windowBytes > wire.MaxTCPWindow:
		return fmt.Errorf("tcp --window %d bytes: an agent takes at most %d (16m) per connection; split the window over more --streams", windowBytes, wire.MaxTCPWindow)
	case total > wire.MaxTCPWindowTotal:
		return fmt.Errorf("tcp --window %d × --streams %d: an agent takes at most %d bytes (64m) of window per transfer", windowBytes, max(streams, 1), wire.MaxTCPWindowTotal)
	case both && 2*total > wire.MaxTCPWindowTotal:
		return fmt.Errorf("tcp --both --window %d × --streams %d: %d bytes each way, %d at once, above the %d bytes (64m) an agent takes for both transfers together; use a smaller --window or fewer --streams",
			windowBytes, max(streams, 1), total, 2*total, wire.MaxTCPWindowTotal)
	}
	return nil
}
