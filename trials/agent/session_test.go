package agent_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

var (
	token    = []byte("test-token-0123456789abcdef")
	loopback = netip.MustParseAddr("127.0.0.1")
)

// syncBuf is a log sink safe for the agent's goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds, failing the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leakCheck registers a goroutine-leak check that runs after every other
// cleanup of the test (the agent's shutdown included).
func leakCheck(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

type testAgent struct {
	addr string
	fake *agenttest.Traffic
	log  *syncBuf
	stop func() error // stops the agent, returns Serve's error
}

// waitLog waits until the agent's log contains every string.
func (a *testAgent) waitLog(t *testing.T, want ...string) {
	t.Helper()
	waitFor(t, "agent log lines "+strings.Join(want, ", "), func() bool {
		l := a.log.String()
		for _, w := range want {
			if !strings.Contains(l, w) {
				return false
			}
		}
		return true
	})
}

func startAgent(t *testing.T, mod func(*agent.Config)) *testAgent {
	t.Helper()
	a := &testAgent{fake: agenttest.New(t, loopback), log: &syncBuf{}}
	cfg := agent.Config{
		Token:    token,
		Traffic:  a.fake,
		Policy:   agent.Policy{MaxRateBps: 1e9, MaxDuration: time.Minute},
		Software: "agent-under-test",
		Logger:   slog.New(slog.NewTextHandler(a.log, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := agent.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	a.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-done:
			case <-time.After(5 * time.Second):
				serr = errors.New("Serve did not return within 5 s of cancellation")
			}
		})
		return serr
	}
	t.Cleanup(func() {
		if err := a.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		t.Logf("agent log:\n%s", a.log.String())
	})
	return a
}

func dial(t *testing.T, addr string) *agent.Client {
	t.Helper()
	c, err := agent.Dial(context.Background(), addr, token, agent.DialConfig{Software: "controller-under-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func bidirSetup(id uint64, d time.Duration) wire.TrialSetup {
	return wire.TrialSetup{TrialID: id, Spec: trials.Spec{
		FrameSize: 512,
		Streams:   []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}},
		RateFPS:   1000, Duration: d, Settle: 100 * time.Millisecond,
	}, ControllerPort: 40000, Latency: agent.LatencyRoundTrip, ReflectFPS: 10}
}

func TestTrialExchange(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	info := c.Info()
	if d := cmp.Diff(wire.AgentInfo{Software: "agent-under-test", PeerAddr: "127.0.0.1", MaxRateBps: 1e9, MaxDuration: int64(time.Minute),
		ClockSync: agent.ClockNone, KeepaliveInterval: int64(agent.DefaultKeepaliveInterval), PeerTimeout: int64(agent.DefaultPeerTimeout),
		IdleTimeout: int64(agent.DefaultIdleTimeout), SessionTimeout: int64(agent.DefaultSessionTimeout)}, info); d != "" {
		t.Errorf("agent info (-want +got):\n%s", d)
	}
	ctx := context.Background()
	for id := uint64(1); id <= 2; id++ {
		setup := bidirSetup(id, 200*time.Millisecond)
		ready, err := c.Setup(ctx, setup)
		if err != nil {
			t.Fatalf("trial %d: Setup: %v", id, err)
		}
		if d := cmp.Diff(wire.Ready{TrialID: id, AgentPort: 40000}, ready); d != "" {
			t.Errorf("ready (-want +got):\n%s", d)
		}
		if err := c.Start(ctx, id); err != nil {
			t.Fatalf("trial %d: Start: %v", id, err)
		}
		s := <-a.fake.Started()
		<-s.Done() // the fake sender ends with the trial's duration
		if _, why := s.StoppedAt(); why != "done" {
			t.Errorf("fake sender stopped by %q, want done", why)
		}
		res, err := c.Stop(ctx, id, []wire.StreamSent{{ID: 1, Sent: 205}})
		if err != nil {
			t.Fatalf("trial %d: Stop: %v", id, err)
		}
		want := wire.Results{TrialID: id, Streams: []trials.StreamResult{
			{ID: 1, Direction: trials.AtoB, Received: 200, Lost: 5, TaggedLatencyNs: -1, LastLossNs: int64(200 * time.Millisecond)},
			{ID: 2, Direction: trials.BtoA, IntendedFPS: 1000, Sent: 200, TaggedLatencyNs: -1, LastLossNs: -1},
		}, Reflected: 2, Paths: trials.Paths{Transport: "fake", TX: "fake", RX: "fake", Timestamps: "fake"}}
		if d := cmp.Diff(want, res, cmp.FilterPath(func(p cmp.Path) bool {
			n := p.Last().String()
			return n == ".OfferedFPS" || n == ".TxSeconds"
		}, cmp.Ignore())); d != "" {
			t.Errorf("trial %d results (-want +got):\n%s", id, d)
		}
	}
	// Every destination the agent used is the controller's own address
	// and the port it named (the fake also fails the test otherwise).
	for _, d := range a.fake.Dests() {
		if d != netip.MustParseAddrPort("127.0.0.1:40000") {
			t.Errorf("agent sent to %v", d)
		}
	}
	if n := len(a.fake.Dests()); n != 4 {
		t.Errorf("%d destinations asked (2 trials × sender and reflector), want 4", n)
	}
	c.Close()
	a.waitLog(t, "auth ok: session started", `controller=controller-under-test`, "trial set up", "send_to=127.0.0.1:40000",
		`reason="controller closed the connection" trials=2`)
}

// rawConn connects to the agent.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

func newNonce() []byte {
	b := make([]byte, wire.NonceLen)
	rand.Read(b)
	return b
}

// rawHandshake does a correct handshake by hand, keyed as a controller,
// and returns the Hello and Auth it sent.
func rawHandshake(t *testing.T, p *agent.RawPeer) (*wire.Hello, *wire.Auth) {
	t.Helper()
	hello := &wire.Hello{Software: "raw", Nonce: newNonce()}
	if err := p.Write(hello); err != nil {
		t.Fatal(err)
	}
	if m, err := p.Read(time.Second); err != nil {
		t.Fatalf("challenge: %v", err)
	} else if _, ok := m.(*wire.Challenge); !ok {
		t.Fatalf("got %s, want Challenge", m.Type())
	}
	auth := &wire.Auth{MAC: agent.ControllerProof(token, p.Transcript())}
	if err := p.Write(auth); err != nil {
		t.Fatal(err)
	}
	key := agent.SessionKey(token, p.Transcript())
	m, err := p.Read(time.Second)
	if err != nil {
		t.Fatalf("auth ok: %v", err)
	}
	if _, ok := m.(*wire.AuthOK); !ok {
		t.Fatalf("got %s, want AuthOK", m.Type())
	}
	p.SetKey(key, false)
	return hello, auth
}

// readRemoteError reads until the peer's Error message, skipping
// keepalives.
func readRemoteError(t *testing.T, p *agent.RawPeer) *agent.RemoteError {
	t.Helper()
	for {
		m, err := p.Read(5 * time.Second)
		var re *agent.RemoteError
		if errors.As(err, &re) {
			return re
		}
		if err != nil {
			t.Fatalf("want an Error message from the peer, got error %v", err)
		}
		if _, ok := m.(*wire.Keepalive); !ok {
			t.Fatalf("want an Error message from the peer, got %s", m.Type())
		}
	}
}

// TestAgentRefuses: each bad controller is refused with an Error message
// that says why (the controller's side) and a log line (the agent's side).
func TestAgentRefuses(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name   string
		script func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError
		code   wire.Code
		msg    string // in the Error message the controller reads
		log    string // in the agent's log
	}{
		{
			name: "wrong token",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				p := agent.NewRawPeer(nc, wire.Version)
				p.Write(&wire.Hello{Nonce: newNonce()})
				p.Read(time.Second)
				p.Write(&wire.Auth{MAC: agent.ControllerProof([]byte("not-the-token-0123456789"), p.Transcript())})
				return readRemoteError(t, p)
			},
			code: wire.CodeAuth, msg: "authentication failed: the controller's token does not match the agent's --token-file",
			log: "handshake failed", // + wrong token, checked below
		},
		{
			name: "no token",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				p := agent.NewRawPeer(nc, wire.Version)
				p.Write(&wire.Hello{Nonce: newNonce()})
				p.Read(time.Second)
				// An Auth without a MAC: written by hand, as Write refuses nothing.
				body := `{"mac":""}`
				nc.Write(append(header(wire.Version, 3, len(body)), body...))
				return readRemoteError(t, p)
			},
			code: wire.CodeProtocol, msg: "auth mac: 0 bytes, want 32", log: "auth mac: 0 bytes, want 32",
		},
		{
			name: "replayed handshake",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				// A good handshake, recorded...
				first := rawConn(t, a.addr)
				hello, auth := rawHandshake(t, agent.NewRawPeer(first, wire.Version))
				first.Close()
				a.waitLog(t, `msg="session ended"`) // the slot is free again
				// ...replayed on a new connection: the agent's new nonce
				// makes the recorded proof wrong.
				p := agent.NewRawPeer(nc, wire.Version)
				p.Write(hello)
				p.Read(time.Second)
				p.Write(auth)
				return readRemoteError(t, p)
			},
			code: wire.CodeAuth, msg: "authentication failed", log: "wrong token",
		},
		{
			name: "oversized message",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				nc.Write(header(wire.Version, 1, wire.MaxBody+1))
				return readRemoteError(t, agent.NewRawPeer(nc, wire.Version))
			},
			code: wire.CodeProtocol, msg: "Hello of 1048577 bytes, above the handshake limit of 16384 bytes", log: "message too long",
		},
		{
			name: "malformed message",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				body := `{"software":1,"nonce":""}`
				nc.Write(append(header(wire.Version, 1, len(body)), body...))
				return readRemoteError(t, agent.NewRawPeer(nc, wire.Version))
			},
			code: wire.CodeProtocol, msg: "malformed message: Hello body: json: cannot unmarshal number", log: "malformed message",
		},
		{
			name: "unknown version",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				p := agent.NewRawPeer(nc, 7)
				p.Write(&wire.Hello{Nonce: newNonce()})
				return readRemoteError(t, p)
			},
			code: wire.CodeVersion, msg: "unsupported control protocol version 7: this side speaks version 1; run the same rfc2544 release",
			log: "unsupported control protocol version 7",
		},
		{
			name: "not this protocol",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				return readRemoteError(t, agent.NewRawPeer(nc, wire.Version))
			},
			code: wire.CodeProtocol, msg: "is this port an rfc2544 agent?", log: "not an rfc2544 agent control message",
		},
		{
			name: "first message not hello",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				p := agent.NewRawPeer(nc, wire.Version)
				p.Write(&wire.TrialSetup{TrialID: 1, Spec: bidirSetup(1, time.Second).Spec, Latency: agent.LatencyRoundTrip})
				return readRemoteError(t, p)
			},
			code: wire.CodeProtocol, msg: "first message TrialSetup, want Hello", log: "first message TrialSetup",
		},
		{
			name: "silent controller",
			script: func(t *testing.T, a *testAgent, nc net.Conn) *agent.RemoteError {
				return readRemoteError(t, agent.NewRawPeer(nc, wire.Version))
			},
			code: wire.CodeTimeout, msg: "no complete handshake within 300ms", log: "no complete handshake within 300ms",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, func(c *agent.Config) { c.HandshakeTimeout = 300 * time.Millisecond })
			nc := rawConn(t, a.addr)
			re := tc.script(t, a, nc)
			if re.Code != tc.code || !strings.Contains(re.Message, tc.msg) || !re.Fatal {
				t.Errorf("controller read Error{%s, %q, fatal %v}, want code %s saying %q, fatal", re.Code, re.Message, re.Fatal, tc.code, tc.msg)
			}
			a.waitLog(t, "level=WARN msg=\"handshake failed\"", tc.log)
			// The agent closed the connection after telling why.
			nc.SetReadDeadline(time.Now().Add(2 * time.Second))
			if n, err := io.Copy(io.Discard, nc); err != nil {
				t.Errorf("after the Error: %d bytes then %v, want the agent to close", n, err)
			}
			if strings.Contains(a.log.String(), "auth ok") && tc.name != "replayed handshake" {
				t.Error("agent logged auth ok")
			}
		})
	}
}

func header(version uint16, typ uint16, length int) []byte {
	b := make([]byte, wire.HeaderLen)
	copy(b, "2544")
	binary.BigEndian.PutUint16(b[4:], version)
	binary.BigEndian.PutUint16(b[6:], typ)
	binary.BigEndian.PutUint32(b[8:], uint32(length))
	return b
}

// TestClientErrors: Dial's errors on the controller's side for the same
// faults, against the real agent.
func TestClientErrors(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	ctx := context.Background()
	_, err := agent.Dial(ctx, a.addr, []byte("not-the-token-0123456789"), agent.DialConfig{})
	if !errors.Is(err, agent.ErrAuth) || !strings.Contains(err.Error(), "does not match the agent's --token-file") {
		t.Errorf("wrong token: error %v, want ErrAuth saying the token does not match", err)
	}
	_, err = agent.Dial(ctx, a.addr, nil, agent.DialConfig{})
	if err == nil || !strings.Contains(err.Error(), "token: empty") {
		t.Errorf("no token: error %v, want token: empty", err)
	}
	_, err = agent.Dial(ctx, a.addr, []byte("short"), agent.DialConfig{})
	if err == nil || !strings.Contains(err.Error(), "shorter than the minimum 16") {
		t.Errorf("short token: error %v", err)
	}
	var v2 agent.DialConfig
	agent.SetVersion(&v2, 2)
	_, err = agent.Dial(ctx, a.addr, token, v2)
	if !errors.Is(err, agent.ErrVersion) || !strings.Contains(err.Error(), "unsupported control protocol version 2: this side speaks version 1") {
		t.Errorf("version 2: error %v, want ErrVersion naming both versions", err)
	}
	a.waitLog(t, "unsupported control protocol version 2")
}

// fakeAgent serves one connection with script, as a broken or hostile agent.
func fakeAgent(t *testing.T, script func(p *agent.RawPeer, nc net.Conn)) (addr string, done <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer ln.Close()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		script(agent.NewRawPeer(nc, wire.Version), nc)
	}()
	t.Cleanup(func() { ln.Close(); <-ch })
	return ln.Addr().String(), ch
}

// TestClientRefusesBadAgent: an agent that cannot prove the token, speaks
// another version, or sends oversized or malformed messages is refused,
// and the client tells it why.
func TestClientRefusesBadAgent(t *testing.T) {
	leakCheck(t)
	tests := []struct {
		name   string
		answer func(p *agent.RawPeer, nc net.Conn) // after reading Hello
		is     error
		want   string // in Dial's error
		told   wire.Code
		tmsg   string // in the Error the client sent
	}{
		{
			name: "agent without the token",
			answer: func(p *agent.RawPeer, nc net.Conn) {
				p.Write(&wire.Challenge{Nonce: newNonce()})
				p.Read(time.Second)
				p.Write(&wire.AuthOK{MAC: make([]byte, 32), Agent: wire.AgentInfo{MaxRateBps: 1, ClockSync: agent.ClockNone}})
			},
			is: agent.ErrAuth, want: "the agent failed to prove it holds the token", told: wire.CodeAuth, tmsg: "failed to prove it holds the token",
		},
		{
			name: "agent of another version",
			answer: func(p *agent.RawPeer, nc net.Conn) {
				agent.NewRawPeer(nc, 3).Write(&wire.Challenge{Nonce: newNonce()})
			},
			is: agent.ErrVersion, want: "unsupported control protocol version 3: this side speaks version 1", told: wire.CodeVersion, tmsg: "version 3",
		},
		{
			name: "oversized",
			answer: func(p *agent.RawPeer, nc net.Conn) {
				nc.Write(header(wire.Version, 2, 5<<20))
			},
			is: wire.ErrTooLong, want: "Challenge of 5242880 bytes, above the handshake limit of 16384 bytes", told: wire.CodeProtocol, tmsg: "above the handshake limit",
		},
		{
			name: "malformed",
			answer: func(p *agent.RawPeer, nc net.Conn) {
				body := `{"nonce":"AAAA","x":1}`
				nc.Write(append(header(wire.Version, 2, len(body)), body...))
			},
			is: wire.ErrMalformed, want: `unknown field "x"`, told: wire.CodeProtocol, tmsg: `unknown field "x"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var told *agent.RemoteError
			addr, done := fakeAgent(t, func(p *agent.RawPeer, nc net.Conn) {
				if _, err := p.Read(time.Second); err != nil {
					t.Errorf("fake agent: read hello: %v", err)
					return
				}
				tc.answer(p, nc)
				for {
					_, err := p.Read(2 * time.Second)
					if errors.As(err, &told) || err != nil {
						return
					}
				}
			})
			_, err := agent.Dial(context.Background(), addr, token, agent.DialConfig{HandshakeTimeout: 2 * time.Second})
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial: error %v, want %v saying %q", err, tc.is, tc.want)
			}
			<-done
			if told == nil || told.Code != tc.told || !strings.Contains(told.Message, tc.tmsg) {
				t.Errorf("client told the agent %v, want code %s saying %q", told, tc.told, tc.tmsg)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.AuthBurst, c.AuthRefill = 2, time.Hour })
	ctx := context.Background()
	for i := range 2 {
		if _, err := agent.Dial(ctx, a.addr, []byte("not-the-token-0123456789"), agent.DialConfig{}); !errors.Is(err, agent.ErrAuth) {
			t.Fatalf("attempt %d: error %v, want ErrAuth", i+1, err)
		}
	}
	// Now even the right token is refused from this address, before any
	// handshake.
	_, err := agent.Dial(ctx, a.addr, token, agent.DialConfig{})
	var re *agent.RemoteError
	if !errors.As(err, &re) || re.Code != wire.CodeRateLimited || !strings.Contains(re.Message, "too many failed authentications from 127.0.0.1: try again in") {
		t.Errorf("third attempt: error %v, want rate-limited", err)
	}
	a.waitLog(t, "refused: too many failed authentications from this address")
	// The agent logs a failed handshake after it told the client, so the
	// second line may come after the refusal's (CI, 2026-12-02).
	waitFor(t, "two failed attempts logged", func() bool { return strings.Count(a.log.String(), "wrong token") >= 2 })
	if n := strings.Count(a.log.String(), "wrong token"); n != 2 {
		t.Errorf("%d failed attempts logged, want 2", n)
	}
}

func TestBusy(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c1 := dial(t, a.addr)
	_, err := agent.Dial(context.Background(), a.addr, token, agent.DialConfig{})
	if !errors.Is(err, agent.ErrBusy) || !strings.Contains(err.Error(), "agent busy: serving controller 127.0.0.1:") {
		t.Fatalf("second controller: error %v, want ErrBusy naming the first", err)
	}
	a.waitLog(t, `msg="refused: busy"`)
	// The first session is unaffected.
	if _, err := c1.Setup(context.Background(), bidirSetup(1, time.Second)); err != nil {
		t.Fatalf("first controller after the refusal: %v", err)
	}
	c1.Close()
	// Not just "session ended": the first trial's stop line says why="session ended" earlier.
	a.waitLog(t, `msg="session ended"`)
	c3 := dial(t, a.addr)
	c3.Close()
}

func TestIdleTimeout(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.IdleTimeout = 300 * time.Millisecond })
	// The agent's idle clock starts inside the handshake: before Dial
	// returns but after it began. So the session's end is at least 300 ms
	// after dialing began (the lower bound), and about 300 ms after Dial
	// returned (the upper bound, with room for a loaded box).
	begin := time.Now()
	c := dial(t, a.addr)
	start := time.Now()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("session not ended 5 s into a 300 ms idle timeout")
	}
	took := time.Since(start)
	var re *agent.RemoteError
	if err := c.Err(); !errors.As(err, &re) || re.Code != wire.CodeTimeout || !strings.Contains(re.Message, "session idle for 300ms with no trial") {
		t.Errorf("client error %v, want the agent's idle timeout", err)
	}
	if since := time.Since(begin); since < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("session ended %v after dialing began, %v after the handshake; want ≥ 300ms and ≤ 2s", since, took)
	}
	a.waitLog(t, `reason="session idle for 300ms with no trial: the agent ended it"`)
}

// TestNoKeepalive: a controller that authenticates and then sends nothing is
// dropped after the peer timeout.
func TestNoKeepalive(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) {
		c.PeerTimeout = 400 * time.Millisecond
		c.KeepaliveInterval = 100 * time.Millisecond
	})
	nc := rawConn(t, a.addr)
	p := agent.NewRawPeer(nc, wire.Version)
	// The agent's peer clock starts when it reads the controller's last
	// handshake message: after begin, before rawHandshake returns. Its
	// hang-up is ≥ 400 ms after begin (exact: the agent may not hang up
	// early) and about 400 ms after start (upper bound with room for a
	// loaded box). It was asserted ≥ 400 ms after start, a clock point after
	// the agent's, and failed at 398.45 ms on a 2-CPU box.
	begin := time.Now()
	rawHandshake(t, p)
	start := time.Now()
	// Read the agent's keepalives until it hangs up.
	for {
		if _, err := p.Read(5 * time.Second); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("read: %v, want EOF", err)
			}
			break
		}
	}
	if since, took := time.Since(begin), time.Since(start); since < 400*time.Millisecond || took > 1500*time.Millisecond {
		t.Errorf("agent hung up %v after the handshake began, %v after it ended; want ≥ 400ms and ≤ 1.5s (its 400ms peer timeout)", since, took)
	}
	a.waitLog(t, `reason="controller lost: no message for 400ms (keepalives missed)"`)
}

// TestInSessionReplay: a keyed message sent twice is refused and ends the
// session; so is a message altered in flight.
func TestInSessionReplay(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		name string
		// send sends the bad message; rec is the connection's recorder,
		// first the bytes of the genuine Start sent before.
		send func(p *agent.RawPeer, rec *recorder, first []byte)
	}{
		{"replayed", func(p *agent.RawPeer, rec *recorder, first []byte) {
			rec.Conn.Write(first) // the same bytes, an old sequence number
		}},
		{"altered", func(p *agent.RawPeer, rec *recorder, first []byte) {
			rec.alter = func(b []byte) []byte {
				b = bytes.Clone(b)
				b[wire.HeaderLen+len(`{"trial_id":`)] = '7' // Start 6 becomes Start 7
				return b
			}
			p.Write(&wire.Start{TrialID: 6})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAgent(t, nil)
			rec := &recorder{Conn: rawConn(t, a.addr)}
			p := agent.NewRawPeer(rec, wire.Version)
			rawHandshake(t, p)
			rec.on.Store(true)
			if err := p.Write(&wire.Start{TrialID: 5}); err != nil {
				t.Fatal(err)
			}
			rec.on.Store(false)
			// The genuine Start gets a protocol Error (no trial is set
			// up), not a fatal one.
			re := readRemoteError(t, p)
			if re.Fatal || !strings.Contains(re.Message, "Start for trial 5: no trial is set up") {
				t.Fatalf("genuine Start: %v (fatal %v)", re, re.Fatal)
			}
			tc.send(p, rec, rec.buf.Bytes())
			re = readRemoteError(t, p)
			if re.Code != wire.CodeProtocol || !strings.Contains(re.Message, "message authentication failed") || !re.Fatal {
				t.Errorf("%s message: agent said %v, want a fatal message authentication failure", tc.name, re)
			}
			a.waitLog(t, "message authentication failed: Start number 1", `reason="protocol error`)
		})
	}
}

// recorder keeps what is written through it while on, and can alter writes.
type recorder struct {
	net.Conn
	on    atomic.Bool
	buf   bytes.Buffer
	alter func([]byte) []byte
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.on.Load() {
		r.buf.Write(b)
	}
	if r.alter != nil {
		b = r.alter(b)
	}
	return r.Conn.Write(b)
}

// TestOversizedInSession: after authentication the limit is MaxBody (plus
// the MAC); a longer message ends the session with a clear error.
func TestOversizedInSession(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	nc := rawConn(t, a.addr)
	p := agent.NewRawPeer(nc, wire.Version)
	rawHandshake(t, p)
	nc.Write(header(wire.Version, 5, wire.MaxBody+wire.MACLen+1))
	re := readRemoteError(t, p)
	if re.Code != wire.CodeProtocol || !strings.Contains(re.Message, "TrialSetup of 1048609 bytes, above the limit of 1048608 bytes") || !re.Fatal {
		t.Errorf("agent said %v, want a fatal protocol error naming the limit", re)
	}
	a.waitLog(t, `reason="protocol error: message too long`)
}

// TestSenderLimitTransient: the agent's Results say its tester limit is
// transient only when its sender says every reason is a stall it caught up
// from, so the controller reruns such a trial and takes any other as the
// tester's ceiling.
func TestSenderLimitTransient(t *testing.T) {
	for _, transient := range []bool{true, false} {
		t.Run(fmt.Sprint("transient=", transient), func(t *testing.T) {
			leakCheck(t)
			const why = "stream 2: generator sent 180 of 200 planned frames in time"
			a := startAgent(t, func(cfg *agent.Config) {
				cfg.Traffic.(*agenttest.Traffic).SendLimit = &agent.SendResult{TesterLimitReason: why, TesterLimitTransient: transient}
			})
			c := dial(t, a.addr)
			ctx := context.Background()
			if _, err := c.Setup(ctx, bidirSetup(1, 200*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx, 1); err != nil {
				t.Fatal(err)
			}
			<-(<-a.fake.Started()).Done()
			res, err := c.Stop(ctx, 1, []wire.StreamSent{{ID: 1, Sent: 200}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TesterLimited || res.TesterLimitReason != why || res.TesterLimitTransient != transient {
				t.Errorf("results: limited %v reason %q transient %v, want true %q %v", res.TesterLimited, res.TesterLimitReason, res.TesterLimitTransient, why, transient)
			}
			c.Close()
		})
	}
}
