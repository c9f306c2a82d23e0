package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// The agent's TCP data mode (wire.TCPSetup): under the session, the agent
// opens a TCP port on its control address, accepts the trial's connections
// from the controller's address only (any other is closed unread and
// counted), and echoes (RTT), reads (to the agent) or writes (from the
// agent) on them. What it sends is bounded by its policy: the writer is
// paced at --max-rate's payload share (wire.TCPPayloadShare) and stops at
// its byte budget (wire.TCPBudget); the reader reads no faster than that
// share, so TCP's flow control holds the controller's sender and the
// agent's ACKs stay proportionate; the RTT echo writes at most the setup's
// probes bytes. When the pace held a transfer back, TCPResults says so
// (Capped): the rate was the agent's cap, not the path's.

// TCPNamespacer is implemented by a Traffic whose sockets live in a network
// namespace: the agent opens its TCP trials' listeners there too. A Traffic
// without it gets them in the agent's own namespace.
type TCPNamespacer interface{ TCPNamespace() string }

// TCPNamespace implements TCPNamespacer.
func (u *UDPTraffic) TCPNamespace() string { return u.Config.Namespace }

// tcpAcceptWait bounds the wait at Start for connections the controller
// made before sending it.
const tcpAcceptWait = 3 * time.Second

// CheckTCP refuses a TCP setup that breaks the policy, with an error that
// names the setting and the fix. The setup's own fields are valid.
func (p Policy) CheckTCP(s wire.TCPSetup) error {
	if p.MaxRateBps <= 0 || p.MaxDuration <= 0 {
		return fmt.Errorf("agent policy: max rate %g bit/s and max duration %v must be set", p.MaxRateBps, p.MaxDuration)
	}
	if d := wire.TCPLength(s); s.Kind != wire.TCPRTT && d > p.MaxDuration {
		return fmt.Errorf("tcp trial %d lasts %v, above the agent's --max-duration %v; shorten the transfer (--duration) or restart the agent with a longer --max-duration",
			s.TrialID, d, p.MaxDuration)
	}
	return nil
}

// tcpTrial is the TCP trial in progress.
type tcpTrial struct {
	setup    wire.TCPSetup
	ln       *net.TCPListener
	ctx      context.Context
	cancel   context.CancelFunc
	timer    *time.Timer
	started  bool
	accepted chan *net.TCPConn
	refused  atomic.Uint64
	acceptWG sync.WaitGroup
	conns    []*net.TCPConn
	// The worker fills res and err, then closes done.
	done chan struct{}
	res  wire.TCPResults
	err  error
}

// handleTCP serves the TCP mode's messages: TCPSetup, and Start and Stop
// (and a refused TrialSetup) while a TCP trial is in progress. ok is false
// for any other message.
//
// Two TCP trials may run at once when they are transfers the opposite way
// (one to the agent, one from it: the RFC 6349 test in both directions at
// once); the agent then writes in one of them only, so its --max-rate
// bounds what it sends as with one, and their windows together stay within
// wire.MaxTCPWindowTotal.
func (se *session) handleTCP(ctx context.Context, m wire.Message, reply func(wire.Message) string, deny func(uint64, wire.Code, string, ...any) string) (string, bool) {
	switch m := m.(type) {
	case *wire.TCPSetup:
		if se.trial != nil {
			return deny(m.TrialID, wire.CodeProtocol, "TCPSetup for trial %d while trial %d is in progress; Stop it first", m.TrialID, se.trial.setup.TrialID), true
		}
		if code, err := se.tcpBeside(*m); err != nil {
			return deny(m.TrialID, code, "%v", err), true
		}
		if err := se.s.cfg.Policy.CheckTCP(*m); err != nil {
			return deny(m.TrialID, wire.CodePolicy, "%v", err), true
		}
		r, err := se.tcpSetup(ctx, *m)
		if err != nil {
			return deny(m.TrialID, wire.CodeTraffic, "tcp trial %d: %v", m.TrialID, err), true
		}
		return reply(r), true
	case *wire.TrialSetup:
		if len(se.tcp) > 0 {
			return deny(m.TrialID, wire.CodeProtocol, "TrialSetup for trial %d while tcp trial %d is in progress; Stop it first", m.TrialID, se.tcp[0].setup.TrialID), true
		}
	case *wire.Start:
		if len(se.tcp) == 0 {
			return "", false
		}
		t := se.tcpTrialOf(m.TrialID)
		if t == nil || t.started {
			return deny(m.TrialID, wire.CodeProtocol, "Start for trial %d: %s", m.TrialID, se.tcpStateText()), true
		}
		if err := se.tcpStart(t); err != nil {
			se.stopTCP(t, "start failed")
			return deny(m.TrialID, wire.CodeTraffic, "start tcp trial: %v", err), true
		}
		return reply(&wire.Started{TrialID: m.TrialID}), true
	case *wire.Stop:
		if len(se.tcp) == 0 {
			return "", false
		}
		t := se.tcpTrialOf(m.TrialID)
		if t == nil {
			return deny(m.TrialID, wire.CodeProtocol, "Stop for trial %d: %s", m.TrialID, se.tcpStateText()), true
		}
		return reply(se.stopTCP(t, "stop")), true
	}
	return "", false
}

// tcpBeside refuses a TCP setup that cannot run beside the session's TCP
// trials: only a transfer the other way beside one transfer, their windows
// within wire.MaxTCPWindowTotal together. The error names the trial in the
// way and the fix.
func (se *session) tcpBeside(m wire.TCPSetup) (wire.Code, error) {
	switch len(se.tcp) {
	case 0:
		return "", nil
	case 1:
	default:
		return wire.CodeProtocol, fmt.Errorf("TCPSetup for trial %d while tcp trials %d and %d are in progress; Stop one first", m.TrialID, se.tcp[0].setup.TrialID, se.tcp[1].setup.TrialID)
	}
	o := se.tcp[0].setup
	if o.Kind == wire.TCPRTT || m.Kind == wire.TCPRTT || o.Kind == m.Kind {
		return wire.CodeProtocol, fmt.Errorf("TCPSetup for trial %d (%s) while tcp trial %d (%s) is in progress: a second tcp trial at once must be a transfer the other way (%s beside %s); Stop it first",
			m.TrialID, m.Kind, o.TrialID, o.Kind, wire.TCPToAgent, wire.TCPFromAgent)
	}
	if w := int64(o.Streams)*int64(o.WindowBytes) + int64(m.Streams)*int64(m.WindowBytes); w > wire.MaxTCPWindowTotal {
		return wire.CodePolicy, fmt.Errorf("tcp trial %d: window_bytes %d × streams %d beside tcp trial %d's %d × %d: %d bytes, above the agent's %d for the trials of a session at once; use smaller windows",
			m.TrialID, m.WindowBytes, m.Streams, o.TrialID, o.WindowBytes, o.Streams, w, wire.MaxTCPWindowTotal)
	}
	return "", nil
}

// tcpTrialOf returns the session's TCP trial id, or nil.
func (se *session) tcpTrialOf(id uint64) *tcpTrial {
	for _, t := range se.tcp {
		if t.setup.TrialID == id {
			return t
		}
	}
	return nil
}

func (se *session) tcpStateText() string {
	var st []string
	for _, t := range se.tcp {
		if t.started {
			st = append(st, fmt.Sprintf("tcp trial %d is running", t.setup.TrialID))
		} else {
			st = append(st, fmt.Sprintf("tcp trial %d is set up and not started", t.setup.TrialID))
		}
	}
	return strings.Join(st, ", ")
}

// tcpSetup opens the trial's port and starts accepting the controller's
// connections; it returns Ready with the port.
func (se *session) tcpSetup(ctx context.Context, m wire.TCPSetup) (*wire.Ready, error) {
	cfg := se.s.cfg
	ns := ""
	if n, ok := cfg.Traffic.(TCPNamespacer); ok {
		ns = n.TCPNamespace()
	}
	window := m.WindowBytes
	if m.Kind == wire.TCPRTT {
		window = 0
	}
	ln, err := trials.ListenTCP(trials.TCPEnd{Namespace: ns, Addr: se.local.Addr(), Port: m.AgentPort}, window)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithDeadline(ctx, time.Now().Add(cfg.StartTimeout+wire.TCPLength(m)+cfg.StopGrace))
	t := &tcpTrial{setup: m, ln: ln, ctx: tctx, cancel: cancel, timer: time.NewTimer(cfg.StartTimeout),
		accepted: make(chan *net.TCPConn, m.Streams), done: make(chan struct{})}
	context.AfterFunc(tctx, func() { ln.Close() })
	peer := se.peer.Addr().Unmap()
	t.acceptWG.Go(func() {
		defer ln.Close() // no more connections once the trial's are in
		for n := 0; n < m.Streams; {
			c, err := ln.AcceptTCP()
			if err != nil {
				return
			}
			if addrPortOf(c.RemoteAddr()).Addr() != peer {
				// The peer-only rule: nothing is read from, or sent to,
				// another address; the reset tells it at once.
				c.SetLinger(0)
				c.Close()
				t.refused.Add(1)
				continue
			}
			if err := trials.ClampTCPWindow(c, window); err != nil {
				c.Close()
				return
			}
			t.accepted <- c
			n++
		}
	})
	se.trials++
	se.tcp = append(se.tcp, t)
	port := uint16(0)
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		port = uint16(a.Port)
	}
	se.log.Info("tcp trial set up", "trial", m.TrialID, "kind", m.Kind, "streams", m.Streams, "window", m.WindowBytes,
		"duration", time.Duration(m.Duration), "port", port, "peer", netip.AddrPortFrom(peer, 0).Addr().String())
	return &wire.Ready{TrialID: m.TrialID, AgentPort: port}, nil
}

// tcpStart takes the controller's connections for t and starts the
// trial's worker.
func (se *session) tcpStart(t *tcpTrial) error {
	cfg := se.s.cfg
	wait := time.NewTimer(tcpAcceptWait)
	defer wait.Stop()
	for len(t.conns) < t.setup.Streams {
		select {
		case c := <-t.accepted:
			t.conns = append(t.conns, c)
		case <-wait.C:
			return fmt.Errorf("%d of the trial's %d connections from the controller %v arrived within %v of Start (%d from other addresses refused)",
				len(t.conns), t.setup.Streams, se.peer.Addr(), tcpAcceptWait, t.refused.Load())
		case <-t.ctx.Done():
			return t.ctx.Err()
		}
	}
	t.started = true
	length := wire.TCPLength(t.setup)
	t.timer.Reset(length + cfg.StopGrace)
	conns := t.conns
	ctx := t.ctx
	// Whatever the worker does, its connections end with the trial.
	context.AfterFunc(ctx, func() {
		for _, c := range conns {
			c.SetLinger(0)
			c.Close()
		}
	})
	share := cfg.Policy.MaxRateBps * wire.TCPPayloadShare
	go func() {
		defer close(t.done)
		res := wire.TCPResults{TrialID: t.setup.TrialID}
		var err error
		switch t.setup.Kind {
		case wire.TCPRTT:
			res.EchoedBytes, err = trials.EchoTCP(conns[0], t.setup.Probes)
		case wire.TCPToAgent:
			var r trials.TCPRecvStats
			r, err = trials.ReceiveTCP(ctx, conns, time.Now().Add(length+cfg.StopGrace), share)
			res.ReceivedBytes, res.ReceiveSpanNs, res.Capped = r.Bytes, int64(r.Span()), r.Capped
		case wire.TCPFromAgent:
			var s trials.TCPSendStats
			s, err = trials.SendTCP(ctx, conns, trials.TCPSendConfig{Duration: length, SampleEvery: wire.TCPSampleEvery(t.setup),
				Budget: max(wire.TCPBudget(cfg.Policy.MaxRateBps, length), 1), MaxPacingBps: share, Drain: cfg.StopGrace})
			s.Run.WindowBytes = t.setup.WindowBytes
			res.WrittenBytes, res.Capped, res.Send = s.Written, s.Capped, s.Run
		}
		t.res, t.err = res, err
	}()
	return nil
}

// stopAllTCP ends every TCP trial of the session at once (its end, an
// internal error).
func (se *session) stopAllTCP(why string) {
	for len(se.tcp) > 0 {
		se.stopTCP(se.tcp[len(se.tcp)-1], why)
	}
}

// stopTCP ends TCP trial t and returns the agent's TCPResults (or an Error
// when its side failed). At the controller's Stop (why "stop") it gives the
// transfer up to 2 s to end; otherwise it closes the trial's connections at
// once.
func (se *session) stopTCP(t *tcpTrial, why string) wire.Message {
	se.tcp = slices.DeleteFunc(se.tcp, func(x *tcpTrial) bool { return x == t })
	t.timer.Stop()
	var reason string
	if t.started && why == "stop" {
		// The controller's side is done: the agent's connections are
		// closing. Anything else (the controller lost, a deadline) closes
		// them now.
		select {
		case <-t.done:
		case <-time.After(2 * time.Second):
			reason = "the agent stopped the transfer before it ended (Stop came before the connections closed)"
		}
	}
	t.cancel()
	t.ln.Close()
	t.acceptWG.Wait()
	close(t.accepted)
	for c := range t.accepted {
		c.Close()
	}
	for _, c := range t.conns {
		c.Close()
	}
	res := &wire.TCPResults{TrialID: t.setup.TrialID}
	var err error
	if t.started {
		<-t.done // the connections are closed: the worker returns at once
		*res, err = t.res, t.err
		if reason != "" {
			err = nil
		}
	}
	res.Refused = t.refused.Load()
	res.TesterLimitReason = reason
	se.log.Info("tcp trial stopped", "trial", t.setup.TrialID, "why", why, "received", res.ReceivedBytes, "written", res.WrittenBytes,
		"echoed", res.EchoedBytes, "refused", res.Refused, "capped", res.Capped)
	if err != nil && !errors.Is(err, context.Canceled) {
		return &wire.Error{Code: wire.CodeTraffic, TrialID: t.setup.TrialID, Message: fmt.Sprintf("agent tcp: %v", err)}
	}
	return res
}

// tcpDeadline stops TCP trial t, whose Start or Stop did not come in time.
func (se *session) tcpDeadline(t *tcpTrial) {
	what := "Start"
	if t.started {
		what = "Stop"
	}
	se.stopTCP(t, "deadline")
	msg := fmt.Sprintf("no %s from the controller by the tcp trial's deadline: the agent closed the trial's connections", what)
	se.log.Warn("tcp trial stopped", "trial", t.setup.TrialID, "reason", msg)
	se.c.write(&wire.Error{Code: wire.CodeTimeout, TrialID: t.setup.TrialID, Message: msg})
}
