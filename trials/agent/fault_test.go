package agent_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/agenttest"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// proxy forwards one TCP connection to target and can break it: freeze (a
// partition: bytes are swallowed, nothing is closed) or kill (both ends
// closed, as when a process dies).
type proxy struct {
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.wg.Go(func() { p.pipe(out, in) })
			p.wg.Go(func() { p.pipe(in, out) })
		}
	})
	t.Cleanup(func() { ln.Close(); p.kill(); p.wg.Wait() })
	return p
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !p.frozen.Load() { // a partition carries no FIN either
				dst.Close()
			}
			return
		}
	}
}

func (p *proxy) addr() string { return p.ln.Addr().String() }
func (p *proxy) freeze()      { p.frozen.Store(true) }

func (p *proxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// runningTrial sets up and starts a long bidirectional trial and returns
// the agent's running fake sender.
func runningTrial(t *testing.T, a *testAgent, c *agent.Client) *agenttest.Sender {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Setup(ctx, bidirSetup(1, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-a.fake.Started():
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no sender started")
	}
	return nil
}

// stopWithin checks that s stopped within limit of t0 and returns how long
// it took.
func stopWithin(t *testing.T, s *agenttest.Sender, t0 time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(limit + 3*time.Second):
		t.Fatalf("agent's sender still sending %v after the controller was lost", limit+3*time.Second)
	}
	at, why := s.StoppedAt()
	took := at.Sub(t0)
	t.Logf("agent's sender stopped %v after the controller was lost (%s)", took, why)
	if took > limit {
		t.Errorf("agent's sender stopped %v after the controller was lost, want within %v", took, limit)
	}
	return took
}

// TestControllerKilledMidTrial: the controller's connection closes (its
// process died) while the agent sends: the agent stops within 2 s and
// listens again.
func TestControllerKilledMidTrial(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	s := runningTrial(t, a, c)
	t0 := time.Now()
	c.Close() // no Stop, no goodbye: what the kernel does for a dead process
	stopWithin(t, s, t0, 2*time.Second)
	a.waitLog(t, `reason="controller closed the connection"`)
	// Listening again: a new controller gets a session.
	dial(t, a.addr).Close()
}

// TestPartitionMidTrial: the path between controller and agent goes silent
// (no FIN, no RST): the agent stops sending within 2 s, and both sides end
// the session by their peer timeouts.
func TestPartitionMidTrial(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	p := newProxy(t, a.addr)
	c := dial(t, p.addr())
	s := runningTrial(t, a, c)
	t0 := time.Now()
	p.freeze()
	stopWithin(t, s, t0, 2*time.Second)
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("client still up 5 s into a partition")
	}
	took := time.Since(t0)
	err := c.Err()
	if !errors.Is(err, agent.ErrAgentLost) || !strings.Contains(err.Error(), "no message from the agent for 1.5s") {
		t.Errorf("client error %v, want ErrAgentLost after its peer timeout", err)
	}
	if took > 2*time.Second {
		t.Errorf("client noticed the partition after %v, want within 2s", took)
	}
	if _, err := c.Stop(context.Background(), 1, nil); !errors.Is(err, agent.ErrAgentLost) {
		t.Errorf("Stop after the partition: %v, want ErrAgentLost", err)
	}
	a.waitLog(t, `reason="controller lost: no message for 1.5s (keepalives missed)"`)
}

// TestAgentKilledMidTrial: the agent dies while the controller runs its own
// traffic; the controller's Stop returns ErrAgentLost at once, which the
// caller reports as "trial invalid (agent lost)", never as DUT loss.
func TestAgentKilledMidTrial(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	p := newProxy(t, a.addr)
	c := dial(t, p.addr())
	s := runningTrial(t, a, c)
	p.kill()
	t0 := time.Now()
	_, err := c.Stop(context.Background(), 1, nil)
	took := time.Since(t0)
	if !errors.Is(err, agent.ErrAgentLost) {
		t.Fatalf("Stop: error %v, want ErrAgentLost", err)
	}
	t.Logf("Stop returned %v after the agent's death: %v", took, err)
	if took > time.Second {
		t.Errorf("Stop took %v to notice the agent's death, want well under 1s", took)
	}
	stopWithin(t, s, t0, 2*time.Second) // the agent's end saw it too
}

func TestAgentKilledBetweenCalls(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	p := newProxy(t, a.addr)
	c := dial(t, p.addr())
	runningTrial(t, a, c)
	t0 := time.Now()
	p.kill()
	select {
	case <-c.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("client did not notice the agent's death within 2 s")
	}
	t.Logf("client noticed the agent's death after %v", time.Since(t0))
	if err := c.Err(); !errors.Is(err, agent.ErrAgentLost) || !strings.Contains(err.Error(), "the agent closed the control connection") {
		t.Errorf("Err: %v, want ErrAgentLost: the agent closed the control connection", err)
	}
}

// TestTrialDeadlines: a trial whose Start or Stop never comes is stopped
// by the agent, which says so; the session goes on.
func TestTrialDeadlines(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.StartTimeout, c.StopGrace = 200*time.Millisecond, 200*time.Millisecond })
	c := dial(t, a.addr)
	ctx := context.Background()
	// No Start.
	if _, err := c.Setup(ctx, bidirSetup(1, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	a.waitLog(t, "no Start from the controller by the trial's deadline")
	err := c.Start(ctx, 1)
	var re *agent.RemoteError
	if !errors.As(err, &re) || re.Code != wire.CodeTimeout || re.TrialID != 1 {
		t.Errorf("Start after the deadline: %v, want the agent's timeout of trial 1", err)
	}
	// No Stop: the sender ends with the trial, the agent stops the trial
	// StopGrace after its planned end.
	if _, err := c.Setup(ctx, bidirSetup(2, 100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, 2); err != nil {
		t.Fatal(err)
	}
	s := <-a.fake.Started()
	a.waitLog(t, "no Stop from the controller by the trial's deadline")
	<-s.Done()
	if _, err := c.Stop(ctx, 2, nil); !errors.As(err, &re) || re.Code != wire.CodeTimeout || re.TrialID != 2 {
		t.Errorf("Stop after the deadline: %v, want the agent's timeout of trial 2", err)
	}
	// The session is still good.
	if _, err := c.Setup(ctx, bidirSetup(3, 100*time.Millisecond)); err != nil {
		t.Errorf("Setup after two timed-out trials: %v", err)
	}
}

// TestPolicyOverTheWire: a setup above the agent's limits is refused with
// the limit named; the session goes on.
func TestPolicyOverTheWire(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.Policy.MaxRateBps = 10e6 })
	c := dial(t, a.addr)
	ctx := context.Background()
	s := bidirSetup(1, time.Second)
	s.Spec.RateFPS = 5000 // 5000 × 532 × 8 = 21.28 Mbit/s
	_, err := c.Setup(ctx, s)
	if !errors.Is(err, agent.ErrPolicy) || !strings.Contains(err.Error(), "above its --max-rate 10 Mbit/s") {
		t.Errorf("Setup above max rate: %v, want ErrPolicy naming --max-rate", err)
	}
	s.Latency, s.ReflectFPS, s.Spec.RateFPS = agent.LatencyOneWay, 0, 1000
	if _, err := c.Setup(ctx, s); !errors.Is(err, agent.ErrPolicy) || !strings.Contains(err.Error(), "--clock-sync ptp") {
		t.Errorf("one-way Setup on an agent without ptp: %v", err)
	}
	if n := a.fake.Receivers(); n != 0 {
		t.Errorf("refused setups started %d receivers", n)
	}
	s.Latency = agent.LatencyRoundTrip
	if _, err := c.Setup(ctx, s); err != nil {
		t.Errorf("Setup within limits after refusals: %v", err)
	}
	a.waitLog(t, "code=policy")
}

// TestTrafficFailure: the transport's errors reach the controller.
func TestTrafficFailure(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	a.fake.SendErr = errors.New("sendmmsg: no buffer space")
	c := dial(t, a.addr)
	ctx := context.Background()
	if _, err := c.Setup(ctx, bidirSetup(1, time.Second)); err != nil {
		t.Fatal(err)
	}
	err := c.Start(ctx, 1)
	var re *agent.RemoteError
	if !errors.As(err, &re) || re.Code != wire.CodeTraffic || !strings.Contains(re.Message, "start sending: sendmmsg: no buffer space") {
		t.Errorf("Start with a failing sender: %v", err)
	}
}

// TestShutdown: stopping the agent ends the session with a message, stops
// the trial, and leaves no goroutine behind.
func TestShutdown(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	s := runningTrial(t, a, c)
	if err := a.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	<-s.Done()
	<-c.Done()
	var re *agent.RemoteError
	if err := c.Err(); !errors.As(err, &re) || re.Code != wire.CodeShutdown {
		t.Errorf("client error %v, want the agent's shutdown", err)
	}
	if _, err := net.Dial("tcp", a.addr); err == nil {
		t.Error("agent still accepting after Serve returned")
	}
}

// TestSessionWithoutTraffic: a trial the agent only receives needs no
// sender and gives receive counters.
func TestReceiveOnlyTrial(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.Policy.ClockSync = agent.ClockPTP })
	c := dial(t, a.addr)
	ctx := context.Background()
	s := wire.TrialSetup{TrialID: 9, Spec: trials.Spec{FrameSize: 64, Streams: []trials.Stream{{ID: 4, Direction: trials.AtoB}},
		RateFPS: 100, Duration: time.Second}, AgentPort: 45000, Latency: agent.LatencyOneWay}
	r, err := c.Setup(ctx, s)
	if err != nil || r.AgentPort != 45000 {
		t.Fatalf("Setup: %+v, %v", r, err)
	}
	if err := c.Start(ctx, 9); err != nil {
		t.Fatal(err)
	}
	res, err := c.Stop(ctx, 9, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Streams) != 1 || res.Streams[0].Received != 100 || res.Streams[0].Latency.Count != 100 || res.TesterLimited {
		t.Errorf("results %+v", res)
	}
	if d := a.fake.Dests(); len(d) != 0 {
		t.Errorf("receive-only trial without reflection sent to %v", d)
	}
}
