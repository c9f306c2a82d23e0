package agent

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// DialConfig configures the controller's side of a session. Every zero value
// is a documented default.
type DialConfig struct {
	// Software names the controller in the agent's log, e.g.
	// "rfc2544 v0.3.0".
	Software string
	// KeepaliveInterval is how often the client sends Keepalive; zero means
	// DefaultKeepaliveInterval.
	KeepaliveInterval time.Duration
	// PeerTimeout declares the agent lost after this long without any
	// message from it; zero means DefaultPeerTimeout.
	PeerTimeout time.Duration
	// HandshakeTimeout bounds connecting and the handshake; zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// ReplyTimeout bounds each request's wait for its answer (keepalives
	// keep arriving meanwhile); zero means 10 s.
	ReplyTimeout time.Duration

	version uint16 // the protocol version sent; tests change it
}

func (c DialConfig) withDefaults() DialConfig {
	if c.KeepaliveInterval <= 0 {
		c.KeepaliveInterval = DefaultKeepaliveInterval
	}
	if c.PeerTimeout <= 0 {
		c.PeerTimeout = DefaultPeerTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.ReplyTimeout <= 0 {
		c.ReplyTimeout = 10 * time.Second
	}
	if c.version == 0 {
		c.version = wire.Version
	}
	return c
}

// Client is the controller's session with one agent. Its methods drive one
// trial at a time: Setup, Start, Stop. It is safe for concurrent use, but
// requests are answered one at a time.
type Client struct {
	cfg  DialConfig
	c    *conn
	info wire.AgentInfo

	replies chan wire.Message
	done    chan struct{}
	errOnce sync.Once
	err     error
	callMu  sync.Mutex
	wg      sync.WaitGroup
	// tcpIDs numbers the session's TCP trials (TCPTester), above the UDP
	// engine's ids: testers sharing the session (both directions at once)
	// never reuse one.
	tcpIDs atomic.Uint64
}

// JoinHostPort adds DefaultPort to an address without a port.
func JoinHostPort(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	return net.JoinHostPort(trimBrackets(addr), strconv.Itoa(DefaultPort))
}

func trimBrackets(s string) string {
	if len(s) > 1 && s[0] == '[' && s[len(s)-1] == ']' {
		return s[1 : len(s)-1]
	}
	return s
}

// Dial connects to the agent at addr (HOST or HOST:PORT; the port defaults
// to 2544), authenticates with token, checks that the agent holds the token
// too, and starts the keepalives. The agent's refusals come back as a
// *RemoteError that matches ErrAuth, ErrBusy or ErrVersion with errors.Is.
func Dial(ctx context.Context, addr string, token []byte, cfg DialConfig) (*Client, error) {
	if err := CheckToken(token); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", JoinHostPort(addr))
	if err != nil {
		return nil, fmt.Errorf("connect to agent %s: %w", addr, err)
	}
	c, err := handshake(ctx, nc, token, cfg)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	c.wg.Go(c.readLoop)
	c.wg.Go(c.keepaliveLoop)
	return c, nil
}

func handshake(ctx context.Context, nc net.Conn, token []byte, cfg DialConfig) (*Client, error) {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	c := newConn(nc)
	c.version = cfg.version
	fail := func(what string, err error) (*Client, error) {
		if e := errorFor(err); e != nil {
			c.write(e)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no answer within the handshake timeout %v: %w", cfg.HandshakeTimeout, err)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var nonce [wire.NonceLen]byte
	rand.Read(nonce[:])
	if err := c.write(&wire.Hello{Software: cfg.Software, Nonce: nonce[:]}); err != nil {
		return fail("handshake", err)
	}
	m, err := c.read(0)
	if err != nil {
		return fail("handshake", err)
	}
	if _, ok := m.(*wire.Challenge); !ok {
		return fail("handshake", fmt.Errorf("%w: agent answered Hello with %s, want Challenge", wire.ErrMalformed, m.Type()))
	}
	if err := c.write(&wire.Auth{MAC: controllerProof(token, c.transcript)}); err != nil {
		return fail("handshake", err)
	}
	wantProof, key := agentProof(token, c.transcript), sessionKey(token, c.transcript)
	m, err = c.read(0)
	if err != nil {
		return fail("authenticate", err)
	}
	ok, isOK := m.(*wire.AuthOK)
	if !isOK {
		return fail("authenticate", fmt.Errorf("%w: agent answered Auth with %s, want AuthOK", wire.ErrMalformed, m.Type()))
	}
	if !hmac.Equal(ok.MAC, wantProof) {
		c.write(&wire.Error{Code: wire.CodeAuth, Fatal: true, Message: "the agent failed to prove it holds the token: wrong token on the agent, or not the agent you meant"})
		return nil, fmt.Errorf("%w: the agent failed to prove it holds the token; check that both sides use the same token file, and that the address is your agent's", ErrAuth)
	}
	c.setKey(key, false)
	c.writeTimeout = cfg.PeerTimeout
	nc.SetDeadline(time.Time{})
	return &Client{cfg: cfg, c: c, info: ok.Agent, replies: make(chan wire.Message, 4), done: make(chan struct{})}, nil
}

// Info is what the agent said about itself at AuthOK: its limits, clock
// synchronization, and the controller address it will send to.
func (c *Client) Info() wire.AgentInfo { return c.info }

// Done is closed when the session has ended; Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is nil while the session is up, then why it ended: an error matching
// ErrAgentLost when the connection dropped or went silent, a *RemoteError
// when the agent ended the session (idle timeout, shutdown), or
// net.ErrClosed after Close.
func (c *Client) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

func (c *Client) fail(err error) {
	c.errOnce.Do(func() {
		c.err = err
		close(c.done)
		c.c.nc.Close()
	})
}

// lost wraps why the agent was lost.
func (c *Client) lost(err error) error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: the agent closed the control connection", ErrAgentLost)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%w: no message from the agent for %v (keepalives missed: agent down or network partitioned)", ErrAgentLost, c.cfg.PeerTimeout)
	}
	return fmt.Errorf("%w: %w", ErrAgentLost, err)
}

func (c *Client) readLoop() {
	for {
		m, err := c.c.read(c.cfg.PeerTimeout)
		if err != nil {
			var re *RemoteError
			switch {
			case errors.As(err, &re) && !re.Fatal:
				m = &wire.Error{Code: re.Code, Message: re.Message, TrialID: re.TrialID}
			case errors.As(err, &re):
				c.fail(re)
				return
			case errors.Is(err, net.ErrClosed):
				c.fail(fmt.Errorf("agent session closed: %w", net.ErrClosed))
				return
			default:
				if e := errorFor(err); e != nil {
					c.c.write(e)
				}
				c.fail(c.lost(err))
				return
			}
		}
		if _, ok := m.(*wire.Keepalive); ok {
			continue
		}
		select {
		case c.replies <- m:
		default:
			c.c.write(&wire.Error{Code: wire.CodeProtocol, Fatal: true, Message: "the agent sent messages nobody asked for"})
			c.fail(fmt.Errorf("%w: the agent sent %s unasked", ErrAgentLost, m.Type()))
			return
		}
	}
}

func (c *Client) keepaliveLoop() {
	t := time.NewTicker(c.cfg.KeepaliveInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := c.c.write(&wire.Keepalive{}); err != nil {
				c.fail(c.lost(err))
				return
			}
		case <-c.done:
			return
		}
	}
}

// call sends req and waits for the answer of type want about trial id.
// Answers of earlier, abandoned requests are skipped.
func (c *Client) call(ctx context.Context, req wire.Message, want wire.Type, id uint64) (wire.Message, error) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	if err := c.Err(); err != nil {
		return nil, err
	}
	if err := c.c.write(req); err != nil {
		c.fail(c.lost(err))
		return nil, c.Err()
	}
	timer := time.NewTimer(c.cfg.ReplyTimeout)
	defer timer.Stop()
	for {
		select {
		case m := <-c.replies:
			if e, ok := m.(*wire.Error); ok {
				if e.TrialID == id || e.TrialID == 0 {
					return nil, &RemoteError{Code: e.Code, Message: e.Message, TrialID: e.TrialID}
				}
				continue
			}
			if m.Type() == want && trialOf(m) == id {
				return m, nil
			}
		case <-c.done:
			return nil, c.err
		case <-timer.C:
			err := fmt.Errorf("%w: no answer to %s for trial %d within %v", ErrAgentLost, req.Type(), id, c.cfg.ReplyTimeout)
			c.fail(err)
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func trialOf(m wire.Message) uint64 {
	switch m := m.(type) {
	case *wire.Ready:
		return m.TrialID
	case *wire.Started:
		return m.TrialID
	case *wire.Results:
		return m.TrialID
	case *wire.TCPResults:
		return m.TrialID
	}
	return 0
}

// Setup tells the agent about a trial; it answers once it is receiving,
// with the UDP port it receives on. A setup that breaks the agent's policy
// comes back as a *RemoteError matching ErrPolicy, naming the limit.
func (c *Client) Setup(ctx context.Context, s wire.TrialSetup) (wire.Ready, error) {
	if err := (&s).Validate(); err != nil {
		return wire.Ready{}, err
	}
	m, err := c.call(ctx, &s, wire.TypeReady, s.TrialID)
	if err != nil {
		return wire.Ready{}, err
	}
	return *m.(*wire.Ready), nil
}

// Start starts the agent's side of trial id (its B->A senders) and returns
// once they run.
func (c *Client) Start(ctx context.Context, id uint64) error {
	_, err := c.call(ctx, &wire.Start{TrialID: id}, wire.TypeStarted, id)
	return err
}

// Stop ends trial id on the agent (call it after the controller's own
// traffic and the settle wait) and returns the agent's counters. sent is
// what the controller sent on each A->B stream, so the agent counts Lost and
// LastLossNs; nil when it does not know.
func (c *Client) Stop(ctx context.Context, id uint64, sent []wire.StreamSent) (wire.Results, error) {
	m, err := c.call(ctx, &wire.Stop{TrialID: id, Sent: sent}, wire.TypeResults, id)
	if err != nil {
		return wire.Results{}, err
	}
	return *m.(*wire.Results), nil
}

// Close ends the session: the agent stops any trial and listens again.
func (c *Client) Close() error {
	c.fail(fmt.Errorf("agent session closed: %w", net.ErrClosed))
	c.wg.Wait()
	return nil
}
