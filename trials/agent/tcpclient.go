package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// SetupTCP asks the agent for a TCP trial; it answers once it accepts the
// trial's connections, with the TCP port. A setup that breaks the agent's
// policy comes back as a *RemoteError matching ErrPolicy, naming the limit.
func (c *Client) SetupTCP(ctx context.Context, s wire.TCPSetup) (wire.Ready, error) {
	if err := (&s).Validate(); err != nil {
		return wire.Ready{}, err
	}
	m, err := c.call(ctx, &s, wire.TypeReady, s.TrialID)
	if err != nil {
		return wire.Ready{}, err
	}
	return *m.(*wire.Ready), nil
}

// StopTCP ends TCP trial id on the agent and returns its side.
func (c *Client) StopTCP(ctx context.Context, id uint64) (wire.TCPResults, error) {
	m, err := c.call(ctx, &wire.Stop{TrialID: id}, wire.TypeTCPResults, id)
	if err != nil {
		return wire.TCPResults{}, err
	}
	return *m.(*wire.TCPResults), nil
}

// ErrTCPCapped marks a transfer the agent's --max-rate held back: its
// throughput is the agent's cap, not the path's (RunTCP returns the run
// with it).
var ErrTCPCapped = errors.New("tester-limited")

// TCPTester runs the RFC 6349 test's steps against an agent
// (rfc2544.TCPTester): the controller is one end of the TCP connections,
// the agent the other, over the session's path.
type TCPTester struct {
	// Client is the session with the agent.
	Client *Client
	// Namespace holds the controller's sockets ("" for this one's); the
	// connections leave from the control connection's local address, the
	// only one the agent accepts.
	Namespace string
	// Reverse makes the agent the sender (from the agent to this host).
	Reverse bool
	// SampleEvery is the TCP_INFO sample period; zero means 1 s.
	SampleEvery time.Duration
}

func (t *TCPTester) nextID() uint64 { return 1<<40 + t.Client.tcpIDs.Add(1) }

func (t *TCPTester) local() trials.TCPEnd {
	return trials.TCPEnd{Namespace: t.Namespace, Addr: t.Client.LocalAddr().Addr().Unmap()}
}

// dial makes the trial's n connections to the agent's port.
func (t *TCPTester) dial(ctx context.Context, port uint16, n, window int) ([]*net.TCPConn, error) {
	dst := netip.AddrPortFrom(t.Client.RemoteAddr().Addr().Unmap(), port)
	conns := make([]*net.TCPConn, 0, n)
	for range n {
		c, err := trials.DialTCP(ctx, t.local(), dst, window)
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// abort stops a trial that failed on this side, keeping err.
func (t *TCPTester) abort(id uint64, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t.Client.StopTCP(ctx, id)
	return err
}

func (t *TCPTester) lost(err error) error {
	if errors.Is(err, ErrAgentLost) {
		return fmt.Errorf("%w: %w", ErrTrialInvalid, err)
	}
	return err
}

// MeasureRTT measures the idle path's RTT to the agent with probes
// one-byte exchanges (the agent echoes them).
func (t *TCPTester) MeasureRTT(ctx context.Context, probes int) (trials.RTTProbe, error) {
	probes = min(max(probes, 1), wire.MaxRTTProbes)
	id := t.nextID()
	ready, err := t.Client.SetupTCP(ctx, wire.TCPSetup{TrialID: id, Kind: wire.TCPRTT, Streams: 1, Probes: probes})
	if err != nil {
		return trials.RTTProbe{}, t.lost(err)
	}
	conns, err := t.dial(ctx, ready.AgentPort, 1, 0)
	if err != nil {
		return trials.RTTProbe{}, t.abort(id, err)
	}
	defer conns[0].Close()
	if err := t.Client.Start(ctx, id); err != nil {
		return trials.RTTProbe{}, t.lost(t.abort(id, err))
	}
	pctx, cancel := context.WithTimeout(ctx, wire.RTTTrialLength)
	p, perr := trials.ProbeRTT(pctx, conns[0], probes)
	cancel()
	conns[0].Close()
	res, err := t.Client.StopTCP(ctx, id)
	if err := errors.Join(perr, err); err != nil {
		return p, t.lost(err)
	}
	if res.EchoedBytes != uint64(p.Count) {
		return p, fmt.Errorf("rtt probe: the agent echoed %d bytes of %d", res.EchoedBytes, p.Count)
	}
	return p, nil
}

// RunTCP runs one transfer of streams connections with windowBytes windows
// for d, to the agent (or from it, with Reverse). The throughput is the
// receiver's: the payload it read over the time from its first byte to its
// last, on its own clock; the samples and the TCP_INFO totals are the
// sender's.
func (t *TCPTester) RunTCP(ctx context.Context, windowBytes, streams int, d time.Duration) (trials.TCPRun, error) {
	run := trials.TCPRun{Streams: streams, WindowBytes: windowBytes}
	id := t.nextID()
	every := t.SampleEvery
	if every <= 0 {
		every = time.Second
	}
	// At most wire.MaxTCPSamples over the transfer.
	every = max(every, d/wire.MaxTCPSamples+time.Millisecond)
	kind := wire.TCPToAgent
	if t.Reverse {
		kind = wire.TCPFromAgent
	}
	s := wire.TCPSetup{TrialID: id, Kind: kind, Streams: streams, WindowBytes: windowBytes, Duration: int64(d), SampleEvery: int64(every)}
	ready, err := t.Client.SetupTCP(ctx, s)
	if err != nil {
		return run, t.lost(err)
	}
	conns, err := t.dial(ctx, ready.AgentPort, streams, windowBytes)
	if err != nil {
		return run, t.abort(id, err)
	}
	if err := t.Client.Start(ctx, id); err != nil {
		for _, c := range conns {
			c.Close()
		}
		return run, t.lost(t.abort(id, err))
	}
	// The session's end (the agent lost) ends this side's transfer too.
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-t.Client.Done():
			cancel()
		case <-tctx.Done():
		}
	}()
	var local error
	var recv trials.TCPRecvStats
	var written uint64
	if t.Reverse {
		recv, local = trials.ReceiveTCP(tctx, conns, time.Now().Add(d+30*time.Second), 0)
	} else {
		var st trials.TCPSendStats
		st, local = trials.SendTCP(tctx, conns, trials.TCPSendConfig{Duration: d, SampleEvery: every})
		st.Run.Streams, st.Run.WindowBytes = streams, windowBytes
		run, written = st.Run, st.Written
	}
	if err := t.Client.Err(); err != nil {
		return run, t.lost(err)
	}
	res, err := t.Client.StopTCP(ctx, id)
	if err != nil {
		return run, t.lost(errors.Join(local, err))
	}
	if res.TesterLimitReason != "" {
		local = errors.Join(local, fmt.Errorf("agent: %s", res.TesterLimitReason))
	}
	if t.Reverse && local == nil && recv.Bytes != res.WrittenBytes {
		local = fmt.Errorf("this host read %d bytes of the %d the agent wrote", recv.Bytes, res.WrittenBytes)
	}
	if !t.Reverse && local == nil && res.ReceivedBytes != written {
		local = fmt.Errorf("the agent read %d bytes of the %d this host wrote", res.ReceivedBytes, written)
	}
	if res.Capped {
		local = errors.Join(local, fmt.Errorf("%w: the agent's --max-rate %.6g Mbit/s (%.6g Mbit/s of TCP payload) held the transfer back: the throughput is the agent's cap, not the path's; restart the agent with a higher --max-rate",
			ErrTCPCapped, t.Client.Info().MaxRateBps/1e6, t.Client.Info().MaxRateBps*wire.TCPPayloadShare/1e6))
	}
	if t.Reverse {
		run = res.Send
		run.Streams, run.WindowBytes = streams, windowBytes
		run.Bytes = recv.Bytes
		run.Seconds = recv.Span().Seconds()
	} else {
		run.Bytes = res.ReceivedBytes
		run.Seconds = time.Duration(res.ReceiveSpanNs).Seconds()
	}
	run.Bps = 0
	if run.Seconds > 0 {
		run.Bps = float64(run.Bytes) * 8 / run.Seconds
	}
	if local != nil {
		return run, fmt.Errorf("tcp: %w", local)
	}
	return run, ctx.Err()
}
