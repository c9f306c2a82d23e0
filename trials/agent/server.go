package agent

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// Defaults of Config and DialConfig.
const (
	DefaultPort              = 2544
	DefaultKeepaliveInterval = 500 * time.Millisecond
	// DefaultPeerTimeout is how long a side waits for any message
	// (keepalives included) before it declares the peer lost: short enough
	// that an agent stops sending within 2 s of losing its controller.
	DefaultPeerTimeout = 1500 * time.Millisecond
	// DefaultHandshakeTimeout is the pre-authentication deadline: a
	// controller on any real network completes the three messages of the
	// handshake well within it, and an idle connection holds a handshake
	// slot no longer.
	DefaultHandshakeTimeout = 3 * time.Second
	DefaultIdleTimeout      = 10 * time.Minute
	DefaultSessionTimeout   = 24 * time.Hour
	DefaultMaxDuration      = 10 * time.Minute
	DefaultAuthBurst        = 5
	DefaultAuthRefill       = 12 * time.Second
	DefaultMaxHandshakes    = 8
	// DefaultMaxHandshakesPerAddr bounds the handshakes in progress from
	// one source address (IPv6: one /64), so a few addresses cannot hold
	// every slot.
	DefaultMaxHandshakesPerAddr = 2
	// DefaultBusyWait is how long a newly authenticated controller waits
	// for the previous session to finish ending before it is told "busy":
	// a controller that reconnects the moment its last session closed is
	// served, not refused.
	DefaultBusyWait     = 2 * time.Second
	DefaultStartTimeout = 10 * time.Second
	DefaultStopGrace    = 10 * time.Second
)

// Config configures a Server. Token, Traffic and Policy.MaxRateBps are
// required; every other zero value is a documented default.
type Config struct {
	// Token is the shared secret (LoadToken), at least MinTokenLen bytes.
	Token []byte
	// Traffic runs port B's traffic.
	Traffic Traffic
	// Policy is what the agent allows. Policy.MaxDuration zero means
	// DefaultMaxDuration; Policy.ClockSync empty means ClockNone.
	Policy Policy
	// Software names the agent in AuthOK and logs, e.g. "rfc2544 v0.3.0".
	Software string
	// KeepaliveInterval is how often the agent sends Keepalive; zero means
	// DefaultKeepaliveInterval.
	KeepaliveInterval time.Duration
	// PeerTimeout ends a session whose controller sent nothing for this
	// long; zero means DefaultPeerTimeout. Must exceed KeepaliveInterval.
	PeerTimeout time.Duration
	// HandshakeTimeout bounds the whole handshake; zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout ends a session with no trial activity (setup, start,
	// stop) for this long; zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// SessionTimeout ends any session this long after authentication; zero
	// means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// AuthBurst failed handshakes per source address are allowed, then one
	// per AuthRefill; zero means DefaultAuthBurst and DefaultAuthRefill.
	AuthBurst  int
	AuthRefill time.Duration
	// StartTimeout bounds the wait between Ready and Start; zero means
	// DefaultStartTimeout. The agent then stops the trial and says so.
	StartTimeout time.Duration
	// StopGrace is how long after a started trial's planned end (learning,
	// traffic, settle wait) the agent waits for Stop before it stops the
	// trial itself; zero means DefaultStopGrace.
	StopGrace time.Duration
	// MaxHandshakes bounds handshakes in progress at once; zero means
	// DefaultMaxHandshakes.
	MaxHandshakes int
	// MaxHandshakesPerAddr bounds handshakes in progress from one source
	// address (IPv6: one /64); zero means DefaultMaxHandshakesPerAddr.
	MaxHandshakesPerAddr int
	// BusyWait is how long an authenticated controller waits for the
	// previous session to end before it is refused as busy; zero means
	// DefaultBusyWait.
	BusyWait time.Duration
	// Logger receives the session log (peer, auth ok or failed, trials,
	// why a session ended); nil discards it.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Policy.MaxDuration, DefaultMaxDuration)
	def(&c.KeepaliveInterval, DefaultKeepaliveInterval)
	def(&c.PeerTimeout, DefaultPeerTimeout)
	def(&c.HandshakeTimeout, DefaultHandshakeTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.SessionTimeout, DefaultSessionTimeout)
	def(&c.AuthRefill, DefaultAuthRefill)
	def(&c.StartTimeout, DefaultStartTimeout)
	def(&c.StopGrace, DefaultStopGrace)
	def(&c.BusyWait, DefaultBusyWait)
	if c.MaxHandshakesPerAddr == 0 {
		c.MaxHandshakesPerAddr = DefaultMaxHandshakesPerAddr
	}
	if c.Policy.ClockSync == "" {
		c.Policy.ClockSync = ClockNone
	}
	if c.AuthBurst == 0 {
		c.AuthBurst = DefaultAuthBurst
	}
	if c.MaxHandshakes == 0 {
		c.MaxHandshakes = DefaultMaxHandshakes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks c; the error names the field and the fix.
func (c Config) Validate() error {
	if err := CheckToken(c.Token); err != nil {
		return err
	}
	if c.Traffic == nil {
		return errors.New("agent config traffic: not set")
	}
	if !wire.Finite(c.Policy.MaxRateBps) || c.Policy.MaxRateBps <= 0 {
		return fmt.Errorf("agent max rate %g bit/s: must be positive, e.g. 1G", c.Policy.MaxRateBps)
	}
	if c.Policy.ClockSync != "" && c.Policy.ClockSync != ClockNone && c.Policy.ClockSync != ClockPTP {
		return fmt.Errorf("agent clock sync %q: want none or ptp", c.Policy.ClockSync)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"max duration", c.Policy.MaxDuration}, {"keepalive interval", c.KeepaliveInterval}, {"peer timeout", c.PeerTimeout},
		{"handshake timeout", c.HandshakeTimeout}, {"idle timeout", c.IdleTimeout}, {"session timeout", c.SessionTimeout},
		{"auth refill", c.AuthRefill}, {"start timeout", c.StartTimeout}, {"stop grace", c.StopGrace}, {"busy wait", c.BusyWait}} {
		if d.v < 0 {
			return fmt.Errorf("agent %s %v: must not be negative", d.name, d.v)
		}
	}
	if d := c.withDefaults(); d.PeerTimeout <= d.KeepaliveInterval {
		return fmt.Errorf("agent peer timeout %v: must exceed the keepalive interval %v", d.PeerTimeout, d.KeepaliveInterval)
	}
	if c.AuthBurst < 0 || c.MaxHandshakes < 0 || c.MaxHandshakesPerAddr < 0 {
		return errors.New("agent auth burst and max handshakes must not be negative")
	}
	return nil
}

// Server is an agent: it accepts controllers on a listener, authenticates
// them and runs their trials, one session at a time.
type Server struct {
	cfg Config
	log *slog.Logger
	lim *limiter
	hs  chan struct{} // handshake slots
	// refusedLog and failedLog rate-limit the log lines of refused
	// connections and failed handshakes.
	refusedLog, failedLog *logLimiter
	mu                    sync.Mutex
	hsPer                 map[netip.Addr]int // handshakes in progress per limitKey
	busy                  netip.AddrPort     // the controller holding the session, if any
	// since is when busy started; freed is closed when it ends.
	since time.Time
	freed chan struct{}
}

// NewServer checks cfg and returns a Server.
func NewServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		lim:        newLimiter(cfg.AuthBurst, cfg.AuthRefill, time.Now),
		hs:         make(chan struct{}, cfg.MaxHandshakes),
		hsPer:      map[netip.Addr]int{},
		refusedLog: newLogLimiter(1, time.Second, time.Now),
		failedLog:  newLogLimiter(5, time.Second, time.Now),
	}, nil
}

// info is what the server tells a controller at AuthOK.
func (s *Server) info(peer netip.AddrPort) wire.AgentInfo {
	return wire.AgentInfo{
		Software:          s.cfg.Software,
		PeerAddr:          peer.Addr().String(),
		MaxRateBps:        s.cfg.Policy.MaxRateBps,
		MaxDuration:       int64(s.cfg.Policy.MaxDuration),
		ClockSync:         s.cfg.Policy.ClockSync,
		KeepaliveInterval: int64(s.cfg.KeepaliveInterval),
		PeerTimeout:       int64(s.cfg.PeerTimeout),
		IdleTimeout:       int64(s.cfg.IdleTimeout),
		SessionTimeout:    int64(s.cfg.SessionTimeout),
	}
}

// Serve accepts controllers on ln until ctx is cancelled, then ends the
// session (stopping its traffic), closes ln and returns nil once every
// goroutine it started has returned. It returns early with an error only
// when ln fails.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return nil
				}
				continue
			}
			return fmt.Errorf("accept controllers: %w", err)
		}
		backoff = 0
		wg.Go(func() { s.handle(ctx, nc) })
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// refuse sends e unkeyed and gives the peer a moment to read it.
func refuse(nc net.Conn, version uint16, e *wire.Error) {
	e.Fatal = true
	c := newConn(nc)
	c.version = version
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.write(e)
}

// handle runs one connection: rate limit, handshake, session.
func (s *Server) handle(ctx context.Context, nc net.Conn) {
	defer lingerClose(nc)
	peer := addrPortOf(nc.RemoteAddr())
	log := s.log.With("peer", peer.String())
	defer func() {
		if p := recover(); p != nil {
			log.Error("internal error: connection closed", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	// Refusals before a handshake cost the agent nothing but this
	// goroutine and a short linger; they are logged at most once a second
	// with the count of those not logged.
	if ok, retry, _, _ := s.lim.allow(peer.Addr()); !ok {
		s.refused(log, "refused: too many failed authentications from this address", "retry_in", retry.Round(time.Second))
		refuse(nc, wire.Version, &wire.Error{Code: wire.CodeRateLimited,
			Message: fmt.Sprintf("too many failed authentications from %s: try again in %v with the right token", peer.Addr(), retry.Round(time.Second))})
		return
	}
	key := limitKey(peer.Addr())
	s.mu.Lock()
	perAddr := s.hsPer[key] < s.cfg.MaxHandshakesPerAddr
	if perAddr {
		s.hsPer[key]++
	}
	s.mu.Unlock()
	if !perAddr {
		s.refused(log, "refused: too many handshakes in progress from this address", "max_per_address", s.cfg.MaxHandshakesPerAddr)
		refuse(nc, wire.Version, &wire.Error{Code: wire.CodeBusy, Message: fmt.Sprintf("too many handshakes in progress from %s (at most %d); finish or close them first",
			peer.Addr(), s.cfg.MaxHandshakesPerAddr)})
		return
	}
	unclaim := func() {
		s.mu.Lock()
		if s.hsPer[key]--; s.hsPer[key] <= 0 {
			delete(s.hsPer, key)
		}
		s.mu.Unlock()
	}
	select {
	case s.hs <- struct{}{}:
	default:
		unclaim()
		s.refused(log, "refused: too many handshakes in progress", "max", s.cfg.MaxHandshakes)
		refuse(nc, wire.Version, &wire.Error{Code: wire.CodeBusy, Message: "too many handshakes in progress; try again in a few seconds"})
		return
	}
	slots := sync.OnceFunc(func() { <-s.hs; unclaim() })
	defer slots() // also on a panic
	c, info, err := s.handshake(ctx, nc, peer)
	slots()
	if err != nil {
		if !errors.Is(err, ErrBusy) {
			if ok, quiet := s.failedLog.allow(); ok {
				log.Warn("handshake failed", "err", err, "failures_unlogged", quiet) // counted by handshake
			}
		}
		return
	}
	log.Info("auth ok: session started", "controller", info.software, "max_rate", fmtBps(s.cfg.Policy.MaxRateBps),
		"max_duration", s.cfg.Policy.MaxDuration, "clock_sync", s.cfg.Policy.ClockSync)
	defer s.release() // idempotent; also on a panic
	se := &session{s: s, c: c, peer: peer, local: addrPortOf(nc.LocalAddr()), log: log}
	reason := se.run(ctx)
	// Free the slot before saying so: a controller that reconnects on
	// reading "session ended" must not be refused as busy.
	s.release()
	log.Info("session ended", "reason", reason, "trials", se.trials, "duration", time.Since(se.start).Round(time.Millisecond))
}

// lingerClose closes nc so that the peer reads the Error sent last: closing
// a socket with unread input makes the kernel send a reset, which can destroy
// data still in flight to the peer. It half-closes, then discards what the
// peer still sends for at most 1 s or 64 KiB.
func lingerClose(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok && tc.CloseWrite() == nil {
		tc.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, io.LimitReader(tc, 64<<10))
	}
	nc.Close()
}

type helloInfo struct{ software string }

// refused logs a refusal of a connection, at most once a second (with the
// count of refusals not logged since).
func (s *Server) refused(log *slog.Logger, msg string, args ...any) {
	if ok, quiet := s.refusedLog.allow(); ok {
		log.Warn(msg, append(args, "refusals_unlogged", quiet)...)
	}
}

// handshake authenticates the controller and claims the session slot. Every
// handshake is counted as a failure against the peer's address the moment
// it starts, and refunded only once the controller has proved the token: an
// idle connection, a wrong token, a malformed message and a controller that
// retries the moment it reads the refusal are all already counted. On
// failure it has told the peer why.
func (s *Server) handshake(ctx context.Context, nc net.Conn, peer netip.AddrPort) (*conn, helloInfo, error) {
	deadline := time.Now().Add(s.cfg.HandshakeTimeout)
	nc.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Now()) })
	defer stop()
	s.lim.fail(peer.Addr())
	c := newConn(nc)
	fail := func(err error) (*conn, helloInfo, error) {
		nc.SetWriteDeadline(time.Now().Add(time.Second)) // the handshake's may have passed
		if e := errorFor(err); e != nil {
			c.write(e)
		} else if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no complete handshake within %v: %w", s.cfg.HandshakeTimeout, err)
			c.write(&wire.Error{Code: wire.CodeTimeout, Message: err.Error(), Fatal: true})
		}
		return nil, helloInfo{}, err
	}
	m, err := c.read(0)
	if err != nil {
		return fail(fmt.Errorf("read hello: %w", err))
	}
	hello, ok := m.(*wire.Hello)
	if !ok {
		return fail(fmt.Errorf("%w: first message %s, want Hello", wire.ErrMalformed, m.Type()))
	}
	var nonce [wire.NonceLen]byte
	rand.Read(nonce[:])
	if err := c.write(&wire.Challenge{Nonce: nonce[:]}); err != nil {
		return nil, helloInfo{}, err
	}
	n := len(c.transcript)
	m, err = c.read(0)
	if err != nil {
		return fail(fmt.Errorf("read auth: %w", err))
	}
	auth, ok := m.(*wire.Auth)
	if !ok {
		return fail(fmt.Errorf("%w: message %s after Challenge, want Auth", wire.ErrMalformed, m.Type()))
	}
	if !hmac.Equal(auth.MAC, controllerProof(s.cfg.Token, c.transcript[:n])) {
		c.write(&wire.Error{Code: wire.CodeAuth, Fatal: true,
			Message: "authentication failed: the controller's token does not match the agent's --token-file (the attempt is logged and rate-limited)"})
		return nil, helloInfo{}, fmt.Errorf("%w: wrong token (controller %q)", ErrAuth, hello.Software)
	}
	s.lim.refund(peer.Addr()) // the controller holds the token
	holder, since := s.claim(ctx, peer)
	// The wait may have used the handshake's deadline; the peer has
	// proved the token, so it gets a fresh one for the last message.
	nc.SetWriteDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	if holder.IsValid() {
		s.refused(s.log, "refused: busy", "peer", peer.String(), "session_of", holder.String())
		c.write(&wire.Error{Code: wire.CodeBusy, Fatal: true,
			Message: fmt.Sprintf("agent busy: serving controller %s since %s; one session at a time, try again when its run ends",
				holder, since.UTC().Format(time.RFC3339))})
		return nil, helloInfo{}, ErrBusy
	}
	key := sessionKey(s.cfg.Token, c.transcript)
	if err := c.write(&wire.AuthOK{MAC: agentProof(s.cfg.Token, c.transcript), Agent: s.info(peer)}); err != nil {
		s.release()
		return nil, helloInfo{}, err
	}
	c.setKey(key, true)
	nc.SetDeadline(time.Time{})
	return c, helloInfo{software: hello.Software}, nil
}

// claim takes the session slot for peer. When another controller holds it,
// claim waits up to BusyWait (and the handshake's context) for that session
// to end: a session ends when its controller closes the connection, which
// the agent reads a moment after the controller may already have
// reconnected. It returns the zero AddrPort on success, else the holder and
// since when it has held the slot.
func (s *Server) claim(ctx context.Context, peer netip.AddrPort) (holder netip.AddrPort, since time.Time) {
	var timeout <-chan time.Time
	for {
		s.mu.Lock()
		holder, since, freed := s.busy, s.since, s.freed
		if !holder.IsValid() {
			s.busy, s.since, s.freed = peer, time.Now(), make(chan struct{})
			s.mu.Unlock()
			return netip.AddrPort{}, time.Time{}
		}
		s.mu.Unlock()
		if timeout == nil {
			s.log.Info("waiting for the previous session to end", "peer", peer.String(), "session_of", holder.String(), "up_to", s.cfg.BusyWait)
			t := time.NewTimer(s.cfg.BusyWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return holder, since
		case <-ctx.Done():
			return holder, since
		}
	}
}

// release frees the session slot; it may be called more than once.
func (s *Server) release() {
	s.mu.Lock()
	if s.busy.IsValid() {
		close(s.freed)
	}
	s.busy = netip.AddrPort{}
	s.mu.Unlock()
}

// session is one authenticated controller.
type session struct {
	s      *Server
	c      *conn
	peer   netip.AddrPort
	local  netip.AddrPort
	log    *slog.Logger
	start  time.Time
	trials int
	trial  *activeTrial
	tcp    []*tcpTrial // tcpserver.go: at most two, transfers the opposite way
}

// activeTrial is the trial in progress.
type activeTrial struct {
	setup   wire.TrialSetup
	tr      Trial
	ctx     context.Context
	cancel  context.CancelFunc
	recv    Receiver
	send    Sender
	started bool
	timer   *time.Timer
}

type inbound struct {
	m   wire.Message
	err error
}

// run serves the session until it ends and returns why.
func (se *session) run(ctx context.Context) string {
	cfg := se.s.cfg
	se.start = time.Now()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	defer se.c.nc.Close() // unblocks the reader
	defer se.stopTrial("session ended")
	defer se.stopAllTCP("session ended")
	se.c.writeTimeout = cfg.PeerTimeout

	in := make(chan inbound)
	wg.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				se.log.Error("internal error reading from the controller", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				select {
				case in <- inbound{err: fmt.Errorf("agent internal error reading a message: %v", p)}:
				case <-ctx.Done():
				}
			}
		}()
		for {
			m, err := se.c.read(cfg.PeerTimeout)
			select {
			case in <- inbound{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	})
	kaErr := make(chan error, 1)
	wg.Go(func() {
		t := time.NewTicker(cfg.KeepaliveInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := se.c.write(&wire.Keepalive{}); err != nil {
					kaErr <- err
					return
				}
			case <-ctx.Done():
				return
			}
		}
	})
	idle := time.NewTimer(cfg.IdleTimeout)
	defer idle.Stop()
	total := time.NewTimer(cfg.SessionTimeout)
	defer total.Stop()
	fatal := func(code wire.Code, msg string) string {
		se.c.write(&wire.Error{Code: code, Message: msg, Fatal: true})
		return msg
	}
	for {
		var trialTimer <-chan time.Time
		if se.trial != nil {
			trialTimer = se.trial.timer.C
		}
		var tcpTimer [2]<-chan time.Time
		for i, t := range se.tcp[:min(len(se.tcp), 2)] {
			tcpTimer[i] = t.timer.C
		}
		select {
		case r := <-in:
			if r.err != nil {
				return se.readFailed(r.err)
			}
			if _, ok := r.m.(*wire.Keepalive); ok {
				continue
			}
			idle.Reset(cfg.IdleTimeout)
			if reason := se.handle(ctx, r.m); reason != "" {
				return reason
			}
		case <-tcpTimer[0]:
			se.tcpDeadline(se.tcp[0])
		case <-tcpTimer[1]:
			se.tcpDeadline(se.tcp[1])
		case <-trialTimer:
			t := se.trial
			what := "Start"
			if t.started {
				what = "Stop"
			}
			se.stopTrial("deadline")
			msg := fmt.Sprintf("no %s from the controller by the trial's deadline: the agent stopped the trial's traffic", what)
			se.log.Warn("trial stopped", "trial", t.setup.TrialID, "reason", msg)
			se.c.write(&wire.Error{Code: wire.CodeTimeout, TrialID: t.setup.TrialID, Message: msg})
		case err := <-kaErr:
			return "controller lost: keepalive not sent: " + err.Error()
		case <-idle.C:
			return fatal(wire.CodeTimeout, fmt.Sprintf("session idle for %v with no trial: the agent ended it", cfg.IdleTimeout))
		case <-total.C:
			return fatal(wire.CodeTimeout, fmt.Sprintf("session reached the agent's session timeout of %v: the agent ended it", cfg.SessionTimeout))
		case <-ctx.Done():
			return fatal(wire.CodeShutdown, "the agent is shutting down")
		}
	}
}

// readFailed says why reading from the controller failed, telling the
// controller when the fault is its message.
func (se *session) readFailed(err error) string {
	var re *RemoteError
	switch {
	case errors.As(err, &re):
		return "controller sent an error: " + re.Error()
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return "controller closed the connection"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Sprintf("controller lost: no message for %v (keepalives missed)", se.s.cfg.PeerTimeout)
	}
	if e := errorFor(err); e != nil {
		se.c.write(e)
		return "protocol error: " + err.Error()
	}
	return "controller lost: " + err.Error()
}

// handle serves one controller message; a non-empty return ends the
// session with that reason.
//
// A panic while serving the message (a bug: every wire field is bounded
// before use) ends the session with an Error, not the agent: it is the last
// line of defence, logged with its stack.
func (se *session) handle(ctx context.Context, m wire.Message) (reason string) {
	defer func() {
		if p := recover(); p != nil {
			se.log.Error("internal error: the agent ends the session", "panic", fmt.Sprint(p), "message", m.Type().String(), "stack", string(debug.Stack()))
			func() {
				defer func() { recover() }()
				se.stopTrial("internal error")
			}()
			func() {
				defer func() { recover() }()
				se.stopAllTCP("internal error")
			}()
			se.trial, se.tcp = nil, nil
			se.c.write(&wire.Error{Code: wire.CodeProtocol, Fatal: true,
				Message: fmt.Sprintf("agent internal error serving %s: the agent ended the session (its log has the details)", m.Type())})
			reason = fmt.Sprintf("internal error serving %s: %v", m.Type(), p)
		}
	}()
	reply := func(r wire.Message) string {
		if err := se.c.write(r); err != nil {
			return "controller lost: " + err.Error()
		}
		return ""
	}
	deny := func(id uint64, code wire.Code, format string, a ...any) string {
		msg := fmt.Sprintf(format, a...)
		se.log.Warn("refused", "trial", id, "code", code, "reason", msg)
		return reply(&wire.Error{Code: code, TrialID: id, Message: msg})
	}
	if r, ok := se.handleTCP(ctx, m, reply, deny); ok {
		return r
	}
	t := se.trial
	switch m := m.(type) {
	case *wire.TrialSetup:
		if t != nil {
			return deny(m.TrialID, wire.CodeProtocol, "TrialSetup for trial %d while trial %d is in progress; Stop it first", m.TrialID, t.setup.TrialID)
		}
		if err := se.s.cfg.Policy.Check(*m); err != nil {
			return deny(m.TrialID, wire.CodePolicy, "%v", err)
		}
		return reply(se.setup(ctx, m))
	case *wire.Start:
		if t == nil || t.setup.TrialID != m.TrialID || t.started {
			return deny(m.TrialID, wire.CodeProtocol, "Start for trial %d: %s", m.TrialID, se.stateText())
		}
		if err := se.startTrial(); err != nil {
			se.stopTrial("start failed")
			return deny(m.TrialID, wire.CodeTraffic, "start sending: %v", err)
		}
		return reply(&wire.Started{TrialID: m.TrialID})
	case *wire.Stop:
		if t == nil || t.setup.TrialID != m.TrialID {
			return deny(m.TrialID, wire.CodeProtocol, "Stop for trial %d: %s", m.TrialID, se.stateText())
		}
		return reply(se.stopTrial("stop", m.Sent...))
	}
	msg := fmt.Sprintf("unexpected %s message from the controller in a session", m.Type())
	se.c.write(&wire.Error{Code: wire.CodeProtocol, Message: msg, Fatal: true})
	return "protocol error: " + msg
}

func (se *session) stateText() string {
	switch t := se.trial; {
	case t == nil:
		return "no trial is set up"
	case t.started:
		return fmt.Sprintf("trial %d is running", t.setup.TrialID)
	default:
		return fmt.Sprintf("trial %d is set up and not started", t.setup.TrialID)
	}
}

// setup starts receiving for a trial; it returns Ready or an Error.
func (se *session) setup(ctx context.Context, m *wire.TrialSetup) wire.Message {
	p := se.s.cfg.Policy
	length := wire.TrialLength(*m)
	tr := Trial{
		ID:         m.TrialID,
		Spec:       m.Spec,
		Latency:    m.Latency,
		Listen:     netip.AddrPortFrom(se.local.Addr(), m.AgentPort),
		Peer:       netip.AddrPortFrom(se.peer.Addr(), m.ControllerPort),
		ReflectFPS: m.ReflectFPS,
		MaxSendFPS: p.MaxSendFPS(m.Spec.FrameSize),
		Deadline:   time.Now().Add(se.s.cfg.StartTimeout + length + se.s.cfg.StopGrace),
	}
	tctx, cancel := context.WithDeadline(ctx, tr.Deadline)
	var reflectTo netip.AddrPort
	if m.Latency == LatencyRoundTrip && m.ReflectFPS > 0 {
		reflectTo = tr.Peer
	}
	var recv Receiver
	if len(tr.Streams(trials.AtoB)) > 0 || reflectTo.IsValid() {
		var err error
		recv, err = se.s.cfg.Traffic.StartReceive(tctx, tr, reflectTo)
		if err != nil {
			cancel()
			se.log.Warn("trial refused: receiver failed", "trial", m.TrialID, "err", err)
			return &wire.Error{Code: wire.CodeTraffic, TrialID: m.TrialID, Message: fmt.Sprintf("start receiving: %v", err)}
		}
	}
	se.trials++
	se.trial = &activeTrial{setup: *m, tr: tr, ctx: tctx, cancel: cancel, recv: recv, timer: time.NewTimer(se.s.cfg.StartTimeout)}
	se.log.Info("trial set up", "trial", m.TrialID, "frame_size", m.Spec.FrameSize, "rate_fps", m.Spec.RateFPS,
		"streams", len(m.Spec.Streams), "duration", m.Spec.Duration, "latency", m.Latency, "send_to", tr.Peer.String())
	r := &wire.Ready{TrialID: m.TrialID}
	if recv != nil {
		r.AgentPort = recv.Port()
	}
	return r
}

// startTrial starts the agent's senders.
func (se *session) startTrial() error {
	t := se.trial
	t.started = true
	length := wire.TrialLength(t.setup)
	t.timer.Reset(length + se.s.cfg.StopGrace)
	if len(t.tr.Streams(trials.BtoA)) == 0 {
		// The agent only receives (and reflects what it receives): the
		// controller's load may fill the DUT's queue this connection
		// crosses, so its messages may be held up until the trial's
		// deadline (conn.readFull). An agent that sends keeps the peer
		// timeout: it stops sending within 2 s of losing its controller.
		se.c.setQuiet(time.Now().Add(length + se.s.cfg.StopGrace))
	}
	// Sending must end with the trial, whatever the transport does.
	if d := time.Now().Add(length + time.Second); d.Before(t.tr.Deadline) {
		t.tr.Deadline = d
	}
	if len(t.tr.Streams(trials.BtoA)) == 0 {
		return nil
	}
	sctx, cancel := context.WithDeadline(t.ctx, t.tr.Deadline)
	prev := t.cancel
	t.cancel = func() { cancel(); prev() }
	s, err := se.s.cfg.Traffic.StartSend(sctx, t.tr, t.tr.Peer)
	if err != nil {
		return err
	}
	t.send = s
	return nil
}

// stopTrial stops the trial's sender first, then its receiver, and returns
// the agent's Results (or an Error when the transport failed). It does
// nothing without a trial.
func (se *session) stopTrial(why string, sent ...wire.StreamSent) wire.Message {
	t := se.trial
	if t == nil {
		return nil
	}
	se.trial = nil
	se.c.setQuiet(time.Time{})
	t.timer.Stop()
	t.cancel()
	res := &wire.Results{TrialID: t.setup.TrialID}
	byID := [2]map[uint16]trials.StreamResult{{}, {}} // A->B from the receiver, B->A from the sender
	var errs []error
	var reasons []string
	transient := true // every reason is a stall of this host
	if t.send != nil {
		sr, err := t.send.Stop()
		if err != nil {
			errs = append(errs, fmt.Errorf("sender: %w", err))
		}
		if sr.TesterLimitReason != "" {
			reasons = append(reasons, sr.TesterLimitReason)
			transient = sr.TesterLimitTransient
		}
		for _, r := range sr.Streams {
			byID[1][r.ID] = r
		}
		res.Paths = sr.Paths
	}
	if t.recv != nil {
		var counts map[uint16]uint64
		if sent != nil {
			counts = map[uint16]uint64{}
			for _, c := range sent {
				counts[c.ID] = c.Sent
			}
		}
		rr, err := t.recv.Stop(counts)
		if err != nil {
			errs = append(errs, fmt.Errorf("receiver: %w", err))
		}
		res.Reflected = rr.Reflected
		for _, r := range rr.Streams {
			byID[0][r.ID] = r
		}
		res.Paths.Transport = cmp.Or(res.Paths.Transport, rr.Paths.Transport)
		res.Paths.RX, res.Paths.Timestamps = rr.Paths.RX, rr.Paths.Timestamps
	}
	for _, s := range t.setup.Spec.Streams {
		from := byID[0]
		if s.Direction == trials.BtoA {
			from = byID[1]
		}
		r, ok := from[s.ID]
		if !ok && (t.started || s.Direction == trials.AtoB) {
			reasons = append(reasons, fmt.Sprintf("stream %d: the agent's transport returned no counters", s.ID))
			transient = false
		}
		r.ID, r.Direction = s.ID, s.Direction
		if !ok {
			r.TaggedLatencyNs, r.LastLossNs = -1, -1
		}
		if r.KernelDrops > 0 {
			reasons = append(reasons, fmt.Sprintf("stream %d: the agent's socket dropped %d frames in the kernel", s.ID, r.KernelDrops))
			transient = false
		}
		// A mix's per-size latency stays here: the protocol's Results
		// carry per-size counts only (PROTOCOL.md).
		if r.Sizes != nil {
			r.Sizes = slices.Clone(r.Sizes)
			for i := range r.Sizes {
				r.Sizes[i].Latency = nil
			}
		}
		res.Streams = append(res.Streams, r)
	}
	if len(reasons) > 0 {
		res.TesterLimited = true
		res.TesterLimitReason = joinReasons(reasons)
		res.TesterLimitTransient = transient
	}
	se.log.Info("trial stopped", "trial", t.setup.TrialID, "why", why)
	if err := errors.Join(errs...); err != nil {
		return &wire.Error{Code: wire.CodeTraffic, TrialID: t.setup.TrialID, Message: fmt.Sprintf("agent traffic: %v", err)}
	}
	return res
}

func joinReasons(r []string) string {
	s := r[0]
	for _, x := range r[1:] {
		s += "; " + x
	}
	return s
}
