package agent_test

// Tests of issue 17, items 1 to 5 and the agent's part of item 12: the agent
// is a network service facing strangers. Each drives a real agent (Server)
// on loopback.

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// rawSession connects to the agent and authenticates by hand.
func rawSession(t *testing.T, addr string) *agent.RawPeer {
	t.Helper()
	p := agent.NewRawPeer(rawConn(t, addr), wire.Version)
	rawHandshake(t, p)
	return p
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	d, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(d)
}

// TestSetupBoundsOverTheWire (issue 17 items 1–3): every TrialSetup field
// is bounded before the agent allocates or opens anything. Each bad setup,
// sent by an authenticated controller to an agent running the real UDP
// traffic engine, is refused with an Error naming the field, opens no
// socket, and leaves the agent serving. On the old code the frame sizes
// 65,000 and 20 and the huge flow counts were accepted (memory corruption,
// panics: the test binary died) and flows 1000 opened 1,000 sockets.
func TestSetupBoundsOverTheWire(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) {
		c.Traffic = &agent.UDPTraffic{}
		c.Policy.MaxRateBps = 10e6
	})
	ab := []trials.Stream{{ID: 1, Direction: trials.AtoB}}
	ba := func(flows int) []trials.Stream { return []trials.Stream{{ID: 2, Direction: trials.BtoA, Flows: flows}} }
	spec := func(size int, streams []trials.Stream) trials.Spec {
		return trials.Spec{FrameSize: size, Streams: streams, RateFPS: 10, Duration: 200 * time.Millisecond, Settle: 10 * time.Millisecond}
	}
	many := make([]trials.Stream, wire.MaxStreams+1)
	for i := range many {
		many[i] = trials.Stream{ID: uint16(i + 1), Direction: trials.AtoB}
	}
	tests := []struct {
		name string
		spec trials.Spec
		want string // in the Error message
	}{
		{"frame 65000 receive", spec(65000, ab), "frame_size: frame size 65000: above 9216 bytes"},
		{"frame 65000 send", spec(65000, ba(1)), "frame_size: frame size 65000: above 9216 bytes"},
		{"frame 20 B->A", spec(20, ba(1)), "frame_size: frame size 20: below 64 bytes"},
		{"frame 80 IPv6", func() trials.Spec { s := spec(80, ab); s.IPv6 = true; return s }(), "frame size 80: below 84 bytes"},
		{"flows 2^50", spec(512, ba(1125899906842624)), "stream 2 flows 1125899906842624: the agent takes 0 to 64 flows"},
		{"flows 2^50 receive", spec(512, []trials.Stream{{ID: 1, Direction: trials.AtoB, Flows: 1125899906842624}}), "flows 1125899906842624"},
		{"flows 1000", spec(1518, ba(1000)), "stream 2 flows 1000: the agent takes 0 to 64 flows"},
		{"flows summed", spec(512, []trials.Stream{{ID: 1, Direction: trials.AtoB, Flows: 40}, {ID: 2, Direction: trials.BtoA, Flows: 40}}), "flows: 80 summed over the streams"},
		{"streams", spec(512, many), "streams: 9, above the limit of 8"},
		{"rate", func() trials.Spec { s := spec(512, ab); s.RateFPS = 1e12; return s }(), "rate_fps 1e+12: must be a finite number"},
		{"rate change", func() trials.Spec {
			s := spec(512, ab)
			s.RateChange = &trials.RateChange{At: time.Millisecond, RateFPS: 1e300}
			return s
		}(), "rate_change rate_fps 1e+300"},
		{"duration", func() trials.Spec { s := spec(512, ab); s.Duration = 1 << 62; return s }(), "duration_ns 4611686018427387904: must be from 0 to 24h0m0s"},
		{"settle", func() trials.Spec { s := spec(512, ab); s.Settle = 25 * time.Hour; return s }(), "settle_ns"},
		{"burst", func() trials.Spec { s := spec(512, ab); s.BurstFrames = 1 << 50; return s }(), "burst_frames 1125899906842624"},
	}
	fds := openFDs(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := rawSession(t, a.addr)
			setup := &wire.TrialSetup{TrialID: 1, Spec: tt.spec, ControllerPort: 40000, Latency: agent.LatencyRoundTrip}
			if err := p.Write(setup); err != nil {
				t.Fatal(err)
			}
			// The old agent answered Ready; make it Start too, where
			// frame 20 and the flows panicked.
			p.Write(&wire.Start{TrialID: 1})
			re := readRemoteError(t, p)
			if !strings.Contains(re.Message, tt.want) {
				t.Errorf("error %q, want it to contain %q", re.Message, tt.want)
			}
			if n := openFDs(t); n > fds+4 { // this test's control connection and the agent's end of it, at most
				t.Errorf("%d file descriptors open, %d before: the agent opened sockets for a refused trial", n, fds)
			}
		})
	}
	// The agent still serves, and a good trial at the boundary runs.
	c := dial(t, a.addr)
	s := spec(framing9216(), ab)
	if _, err := c.Setup(context.Background(), wire.TrialSetup{TrialID: 7, Spec: s, ControllerPort: 40000, Latency: agent.LatencyRoundTrip}); err != nil {
		t.Fatalf("a valid 9216-byte trial after the refusals: %v", err)
	}
	if _, err := c.Stop(context.Background(), 7, nil); err != nil {
		t.Fatal(err)
	}
}

func framing9216() int { return 9216 }

// TestForeignOversizedDatagrams (issue 17 item 1): datagrams far larger than
// the trial's frames, from a foreign address and from the controller's own,
// reach a real agent's receive socket during a trial: none is counted, the
// agent keeps serving, and the next trial counts the controller's frames.
// The buffer bound itself is TestUDPReceiveBufferBound (package trials),
// with guard bytes after every buffer.
func TestForeignOversizedDatagrams(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.Traffic = &agent.UDPTraffic{} })
	c := dial(t, a.addr)
	ctx := context.Background()
	spec := trials.Spec{FrameSize: 128, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, RateFPS: 1000, Duration: time.Second}
	for id := uint64(1); id <= 3; id++ {
		ready, err := c.Setup(ctx, wire.TrialSetup{TrialID: id, Spec: spec, ControllerPort: 40000, Latency: agent.LatencyRoundTrip})
		if err != nil {
			t.Fatalf("trial %d: %v", id, err)
		}
		dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(ready.AgentPort)}
		big := make([]byte, 65000)
		for _, src := range []string{"127.0.0.3", "127.0.0.1"} {
			u, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.ParseIP(src)}, dst)
			if err != nil {
				t.Fatal(err)
			}
			for range 640 {
				u.Write(big)
			}
			u.Close()
		}
		res, err := c.Stop(ctx, id, []wire.StreamSent{{ID: 1, Sent: 0}})
		if err != nil {
			t.Fatalf("trial %d: %v", id, err)
		}
		if r := res.Streams[0]; r.Received != 0 || r.Duplicate != 0 || r.Reordered != 0 {
			t.Errorf("trial %d: counted %+v from oversized datagrams", id, r)
		}
	}
}

// panicTraffic is the fake traffic with a bug: StartReceive panics.
type panicTraffic struct{ agent.Traffic }

func (panicTraffic) StartReceive(context.Context, agent.Trial, netip.AddrPort) (agent.Receiver, error) {
	var m map[string]int
	m["bug"]++ // assignment to entry in nil map
	return nil, nil
}

// TestPanicEndsSessionNotAgent (issue 17 item 2, the last line): a panic
// while serving a controller's message ends that session with an Error;
// the agent lives on and serves the next controller.
func TestPanicEndsSessionNotAgent(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	fake := a.fake
	a2 := startAgent(t, func(c *agent.Config) { c.Traffic = panicTraffic{fake} })
	c := dial(t, a2.addr)
	_, err := c.Setup(context.Background(), bidirSetup(1, time.Second))
	var re *agent.RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "agent internal error serving TrialSetup: the agent ended the session") {
		t.Fatalf("Setup: %v, want the agent's internal error", err)
	}
	a2.waitLog(t, "internal error: the agent ends the session", "assignment to entry in nil map", `msg="session ended"`)
	c2 := dial(t, a2.addr)
	c2.Close()
}

// TestIdleHandshakesCounted (issue 17 item 4): a handshake counts as a
// failure the moment it starts (refunded when the token is proved), so
// connections that say nothing exhaust their address's allowance at once,
// not at the pre-authentication deadline; the deadline is short.
func TestIdleHandshakesCounted(t *testing.T) {
	leakCheck(t)
	if agent.DefaultHandshakeTimeout > 3*time.Second {
		t.Errorf("pre-authentication deadline %v, want at most 3 s", agent.DefaultHandshakeTimeout)
	}
	a := startAgent(t, func(c *agent.Config) {
		c.AuthBurst, c.AuthRefill, c.HandshakeTimeout = 2, time.Hour, time.Minute
	})
	// Two idle connections, each holding a handshake.
	for range 2 {
		nc := rawConn(t, a.addr)
		p := agent.NewRawPeer(nc, wire.Version)
		if err := p.Write(&wire.Hello{Nonce: newNonce()}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Read(5 * time.Second); err != nil { // Challenge: the handshake is in progress
			t.Fatal(err)
		}
	}
	// The third is refused before its handshake, though the first two
	// have not timed out (the deadline is a minute).
	p := agent.NewRawPeer(rawConn(t, a.addr), wire.Version)
	re := readRemoteError(t, p)
	if re.Code != wire.CodeRateLimited {
		t.Fatalf("third connection: %v, want rate-limited", re)
	}
	// A successful handshake is refunded: on an agent allowing one failure,
	// the right controller connects again and again.
	b := startAgent(t, func(c *agent.Config) { c.AuthBurst, c.AuthRefill = 1, time.Hour })
	for range 3 {
		c, err := agent.Dial(context.Background(), b.addr, token, agent.DialConfig{})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		b.waitLog(t, `msg="session ended"`)
	}
}

// TestHandshakeSlotsPerAddress (issue 17 item 4): three addresses holding
// eight idle connections each cannot keep the real controller out; the
// refusals are logged at most once a second with a count.
func TestHandshakeSlotsPerAddress(t *testing.T) {
	leakCheck(t)
	// A long pre-auth deadline, so that only the per-address slots can
	// let the controller in during the test.
	a := startAgent(t, func(c *agent.Config) { c.HandshakeTimeout = time.Minute })
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, src := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		for range 8 {
			nc, err := d.Dial("tcp", a.addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, nc)
		}
	}
	// Wait until the agent has refused every connection beyond its
	// address's two slots (each refused one reads an Error and EOF).
	refused := 0
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := nc.Read(make([]byte, 1)); err == nil {
			refused++
		}
	}
	if refused < 3*(8-agent.DefaultMaxHandshakesPerAddr) {
		t.Logf("%d of 24 idle connections refused so far", refused)
	}
	for i := range 5 {
		c, err := agent.Dial(context.Background(), a.addr, token, agent.DialConfig{})
		if err != nil {
			t.Fatalf("controller try %d with 24 idle connections from 3 addresses: %v", i+1, err)
		}
		c.Close()
		a.waitLog(t, `msg="session ended"`)
	}
	if n := strings.Count(a.log.String(), "refused: too many handshakes"); n > 2 {
		t.Errorf("%d refusal lines logged in about a second, want at most 2 (1 a second)\n%s", n, a.log.String())
	}
}

// blockingTraffic is the fake traffic whose receivers' Stop waits for
// release: the agent's previous session is still ending.
type blockingTraffic struct {
	agent.Traffic
	release chan struct{}
}

type blockingReceiver struct {
	agent.Receiver
	release chan struct{}
}

func (b blockingTraffic) StartReceive(ctx context.Context, t agent.Trial, to netip.AddrPort) (agent.Receiver, error) {
	r, err := b.Traffic.StartReceive(ctx, t, to)
	return blockingReceiver{r, b.release}, err
}

func (r blockingReceiver) Stop(sent map[uint16]uint64) (agent.RecvResult, error) {
	<-r.release
	return r.Receiver.Stop(sent)
}

// TestReconnectAtSessionEnd (issue 17 item 12, agent part): a controller
// that reconnects while its previous session is still ending (the agent
// has not yet read the close) is served, not refused as busy. The previous
// session is held in its ending by a receiver that stops only when the
// test says so, so the test does not depend on timing.
func TestReconnectAtSessionEnd(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	var fake agent.Traffic
	a := startAgent(t, func(c *agent.Config) {
		fake = c.Traffic
		c.Traffic = blockingTraffic{c.Traffic, release}
	})
	_ = fake
	c1 := dial(t, a.addr)
	if _, err := c1.Setup(context.Background(), bidirSetup(1, time.Second)); err != nil {
		t.Fatal(err)
	}
	c1.Close()
	type result struct {
		c   *agent.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := agent.Dial(context.Background(), a.addr, token, agent.DialConfig{})
		done <- result{c, err}
	}()
	a.waitLog(t, "waiting for the previous session to end")
	free()
	r := <-done
	if r.err != nil {
		t.Fatalf("controller reconnecting at the end of its session: %v", r.err)
	}
	r.c.Close()
}
