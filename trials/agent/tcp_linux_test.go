//go:build linux

package agent_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// The agent's TCP data mode on loopback: a real agent (its TCP sockets are
// real; its UDP engine is the fake, unused), a real controller.

// TestTCPAgentLoopback: the RFC 6349 steps against the agent, both ways:
// the idle RTT probe is echoed byte for byte, and a transfer's bytes are
// all counted by the receiver (the client checks that the agent read
// exactly what this host wrote, and the reverse).
func TestTCPAgentLoopback(t *testing.T) {
	leakCheck(t)
	// A cap above what loopback carries (TestTCPAgentCap has one below).
	a := startAgent(t, func(c *agent.Config) { c.Policy.MaxRateBps = 1e12 })
	c := dial(t, a.addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, reverse := range []bool{false, true} {
		tt := &agent.TCPTester{Client: c, Reverse: reverse, SampleEvery: 200 * time.Millisecond}
		p, err := tt.MeasureRTT(ctx, 20)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rtt: min %v mean %v over %d, path MTU %d, MSS %d", time.Duration(p.MinNs), time.Duration(p.MeanNs), p.Count, p.PathMTU, p.MSSBytes)
		if p.Count != 20 || p.MinNs <= 0 || p.PathMTU <= 0 || p.MSSBytes <= 0 {
			t.Errorf("rtt probe %+v: want 20 exchanges, an RTT, a path MTU and an MSS", p)
		}
		run, err := tt.RunTCP(ctx, 256<<10, 2, time.Second)
		if err != nil {
			t.Fatalf("reverse %v: %v", reverse, err)
		}
		t.Logf("reverse %v: %d bytes in %.3f s = %.0f Mbit/s, sent %d retrans %d, %d samples, mss %d", reverse, run.Bytes, run.Seconds, run.Bps/1e6,
			run.BytesSent, run.BytesRetrans, len(run.Samples), run.MSSBytes)
		// The transfer lasts its second and ends within a second more
		// (what the loopback's socket buffers hold drains at once, unless
		// this host stalls the reader); a sample every 200 ms.
		if run.Bytes == 0 || run.Seconds < 0.9 || run.Seconds > 2 || len(run.Samples) < 4 || run.BytesSent < run.Bytes || run.MSSBytes <= 0 {
			t.Errorf("reverse %v: run %+v: want bytes, 1 s (ended within 2 s), 4 samples or more and the sender's totals", reverse, run)
		}
	}
	a.waitLog(t, `msg="tcp trial stopped"`, "kind=from-agent", "kind=to-agent", "kind=rtt")
}

// tcpTrial sets up a TCP trial by hand and returns the agent's port.
func tcpTrial(t *testing.T, c *agent.Client, s wire.TCPSetup) netip.AddrPort {
	t.Helper()
	ready, err := c.SetupTCP(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return netip.AddrPortFrom(c.RemoteAddr().Addr(), ready.AgentPort)
}

func dialFrom(t *testing.T, from netip.Addr, to netip.AddrPort) *net.TCPConn {
	t.Helper()
	c, err := trials.DialTCP(context.Background(), trials.TCPEnd{Addr: from}, to, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTCPAgentPeerOnly: a connection to a TCP trial's port from any address
// but the controller's is reset unread and does not take a stream's place;
// the trial runs on the controller's connections and the refusal is
// counted in the results.
func TestTCPAgentPeerOnly(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	ctx := context.Background()
	port := tcpTrial(t, c, wire.TCPSetup{TrialID: 3, Kind: wire.TCPToAgent, Streams: 1, Duration: int64(time.Second)})
	// Another host (127.0.0.2 is this host's loopback too, but not the
	// controller's address on the session).
	// The reset may come before the connect returns, before the write (the
	// write then reports it, and a read after it sees only the end: CI on
	// 2026-12-02 read EOF), or after it.
	stranger, err := trials.DialTCP(ctx, trials.TCPEnd{Addr: netip.MustParseAddr("127.0.0.2")}, port, 0)
	if err == nil {
		defer stranger.Close()
		if _, err = stranger.Write([]byte("not the controller")); err == nil {
			stranger.SetReadDeadline(time.Now().Add(3 * time.Second))
			var n int
			if n, err = stranger.Read(make([]byte, 10)); err == nil || errors.Is(err, io.EOF) && n > 0 || isTimeout(err) {
				t.Fatalf("stranger read %d bytes, err %v: want a reset", n, err)
			}
		}
	}
	t.Logf("stranger: %v", err)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("stranger: %v, want a reset", err)
	}
	ctrl := dialFrom(t, loopback, port)
	if err := c.Start(ctx, 3); err != nil {
		t.Fatal(err)
	}
	ctrl.Write([]byte("hello agent"))
	ctrl.CloseWrite()
	ctrl.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := ctrl.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the agent did not close after reading: %v", err)
	}
	res, err := c.StopTCP(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("results %+v", res)
	if res.Refused != 1 || res.ReceivedBytes != uint64(len("hello agent")) {
		t.Errorf("refused %d, received %d bytes: want 1 refused and the controller's 11 bytes only", res.Refused, res.ReceivedBytes)
	}
}

// TestTCPSetupBoundsOverTheWire: a TCPSetup outside the protocol's bounds,
// sent by an authenticated controller, is refused with an Error naming the
// field before the agent opens anything; one that breaks the agent's policy
// (--max-duration) gets a policy Error and the session goes on.
func TestTCPSetupBoundsOverTheWire(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.Policy.MaxDuration = 5 * time.Second })
	fds := openFDs(t)
	for _, tt := range []struct {
		name string
		s    wire.TCPSetup
		want string
	}{
		{"streams", wire.TCPSetup{TrialID: 1, Kind: wire.TCPToAgent, Streams: 65, Duration: 1e9}, "tcp_setup streams 65: want 1 to 64"},
		{"streams huge", wire.TCPSetup{TrialID: 1, Kind: wire.TCPFromAgent, Streams: 1 << 40, Duration: 1e9}, "tcp_setup streams 1099511627776"},
		{"window", wire.TCPSetup{TrialID: 1, Kind: wire.TCPToAgent, Streams: 1, WindowBytes: 1 << 30, Duration: 1e9}, "tcp_setup window_bytes 1073741824"},
		{"window total", wire.TCPSetup{TrialID: 1, Kind: wire.TCPToAgent, Streams: 64, WindowBytes: 16 << 20, Duration: 1e9}, "above the agent's 67108864 per trial"},
		{"duration", wire.TCPSetup{TrialID: 1, Kind: wire.TCPFromAgent, Streams: 1, Duration: 1 << 62}, "tcp_setup duration_ns 4611686018427387904"},
		{"probes", wire.TCPSetup{TrialID: 1, Kind: wire.TCPRTT, Streams: 1, Probes: 1 << 30}, "tcp_setup probes 1073741824"},
		{"kind", wire.TCPSetup{TrialID: 1, Kind: "flood", Streams: 1, Duration: 1e9}, `tcp_setup kind "flood"`},
		{"port", wire.TCPSetup{TrialID: 1, Kind: wire.TCPToAgent, Streams: 1, Duration: 1e9, AgentPort: 22}, "tcp_setup agent_port 22"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := rawSession(t, a.addr)
			if err := p.Write(&tt.s); err != nil {
				t.Fatal(err)
			}
			p.Write(&wire.Start{TrialID: 1})
			re := readRemoteError(t, p)
			if re.Code != wire.CodeProtocol || !strings.Contains(re.Message, tt.want) {
				t.Errorf("error %s %q, want protocol naming %q", re.Code, re.Message, tt.want)
			}
			if n := openFDs(t); n > fds+4 {
				t.Errorf("%d file descriptors open, %d before: the agent opened sockets for a refused trial", n, fds)
			}
		})
	}
	// Over the policy: a clear error, and the session serves on.
	c := dial(t, a.addr)
	ctx := context.Background()
	_, err := c.SetupTCP(ctx, wire.TCPSetup{TrialID: 2, Kind: wire.TCPFromAgent, Streams: 4, Duration: int64(time.Minute)})
	if !errors.Is(err, agent.ErrPolicy) || !strings.Contains(err.Error(), "lasts 1m0s, above the agent's --max-duration 5s") {
		t.Errorf("a 1-minute transfer: error %v, want the policy naming --max-duration", err)
	}
	// The client refuses what the protocol does not allow before sending.
	if _, err := c.SetupTCP(ctx, wire.TCPSetup{TrialID: 3, Kind: wire.TCPToAgent, Streams: 100, Duration: 1e9}); err == nil || !strings.Contains(err.Error(), "streams 100") {
		t.Errorf("100 streams: error %v", err)
	}
	tt := &agent.TCPTester{Client: c}
	if _, err := tt.MeasureRTT(ctx, 5); err != nil {
		t.Fatalf("the session after the refusals: %v", err)
	}
}

// runningTCP starts a transfer from the agent on n connections and returns
// them, with the agent writing.
func runningTCP(t *testing.T, c *agent.Client, n int, d time.Duration) []*net.TCPConn {
	t.Helper()
	port := tcpTrial(t, c, wire.TCPSetup{TrialID: 5, Kind: wire.TCPFromAgent, Streams: n, Duration: int64(d)})
	var conns []*net.TCPConn
	for range n {
		conns = append(conns, dialFrom(t, c.LocalAddr().Addr(), port))
	}
	if err := c.Start(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for _, dc := range conns {
		if _, err := io.ReadAtLeast(dc, buf, 1); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}

// closedWithin reads conns until each ends (the agent closed them) and
// checks that it took at most limit from t0.
func closedWithin(t *testing.T, conns []*net.TCPConn, t0 time.Time, limit time.Duration) {
	t.Helper()
	buf := make([]byte, 256<<10)
	for _, dc := range conns {
		dc.SetReadDeadline(t0.Add(limit + 3*time.Second))
		for {
			if _, err := dc.Read(buf); err != nil {
				if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
					t.Fatalf("the agent still writing %v after the controller was lost", limit+3*time.Second)
				}
				break
			}
		}
	}
	took := time.Since(t0)
	t.Logf("the agent's connections ended %v after the controller was lost", took)
	if took > limit {
		t.Errorf("the agent's connections ended %v after the controller was lost, want within %v", took, limit)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestTCPControllerKilledMidTransfer: the controller's control connection
// closes while the agent writes: the agent closes the trial's connections
// within 2 s (at once, in fact) and listens again.
func TestTCPControllerKilledMidTransfer(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	conns := runningTCP(t, c, 2, 30*time.Second)
	t0 := time.Now()
	c.Close()
	closedWithin(t, conns, t0, 2*time.Second)
	a.waitLog(t, `reason="controller closed the connection"`, `why="session ended"`)
	dial(t, a.addr).Close()
}

// TestTCPPartitionMidTransfer: the control connection goes silent (no FIN,
// no RST) while the agent writes: its peer timeout (1.5 s) ends the session
// and the trial's connections.
func TestTCPPartitionMidTransfer(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	p := newProxy(t, a.addr)
	c := dial(t, p.addr())
	conns := runningTCP(t, c, 1, 30*time.Second)
	t0 := time.Now()
	p.freeze()
	closedWithin(t, conns, t0, agent.DefaultPeerTimeout+500*time.Millisecond)
	a.waitLog(t, "controller lost: no message for 1.5s")
}

// TestTCPAgentCap: what the agent sends in a TCP trial counts against its
// --max-rate: from the agent, its writing is paced at the cap's payload
// share and stops at its byte budget; to the agent, its reading is paced
// at that share, so TCP's flow control holds the controller's sender. On
// loopback (gigabits per second unpaced) both stay within the cap.
func TestTCPAgentCap(t *testing.T) {
	leakCheck(t)
	const capBps = 40e6
	a := startAgent(t, func(c *agent.Config) { c.Policy.MaxRateBps = capBps })
	c := dial(t, a.addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const d = 2 * time.Second
	share := capBps * wire.TCPPayloadShare
	for _, reverse := range []bool{true, false} {
		tt := &agent.TCPTester{Client: c, Reverse: reverse}
		run, err := tt.RunTCP(ctx, 0, 4, d)
		if !errors.Is(err, agent.ErrTCPCapped) || !strings.Contains(err.Error(), "the agent's --max-rate 40 Mbit/s (37.6 Mbit/s of TCP payload) held the transfer back") {
			t.Errorf("reverse %v: error %v, want the run said tester-limited by the agent's --max-rate", reverse, err)
		}
		t.Logf("reverse %v: %d bytes in %.3f s = %.2f Mbit/s (cap %.0f Mbit/s, payload share %.2f); err %v", reverse, run.Bytes, run.Seconds, run.Bps/1e6, capBps/1e6, share/1e6, err)
		if reverse && run.Bytes > wire.TCPBudget(capBps, d) {
			t.Errorf("the agent wrote %d bytes, above its budget %d", run.Bytes, wire.TCPBudget(capBps, d))
		}
		// Over the whole transfer (the first byte's burst included), at
		// most the cap's payload share; and not far below it: the cap is
		// what held the rate.
		if run.Bps > share*1.03 || run.Bps < share*0.8 {
			t.Errorf("reverse %v: %.2f Mbit/s, want the cap's payload share %.2f Mbit/s (at most +3 %%, at least −20 %%)", reverse, run.Bps/1e6, share/1e6)
		}
	}
}

// TestTCPStartDeadline: a TCP trial set up and never started is closed by
// the agent at its start timeout, with an Error saying why.
func TestTCPStartDeadline(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.StartTimeout = 300 * time.Millisecond })
	c := dial(t, a.addr)
	port := tcpTrial(t, c, wire.TCPSetup{TrialID: 8, Kind: wire.TCPToAgent, Streams: 1, Duration: int64(time.Second)})
	a.waitLog(t, "no Start from the controller by the tcp trial's deadline")
	if cn, err := net.DialTimeout("tcp", port.String(), time.Second); err == nil {
		cn.Close()
		t.Errorf("the trial's port %v still accepts after the deadline", port)
	}
	if err := c.Start(context.Background(), 8); err == nil {
		t.Error("Start after the deadline accepted")
	}
}

// TestTCPAgentKilledMidTransfer: the control connection drops while a
// transfer runs (the agent's process died, as the controller sees it): the
// controller's RunTCP returns at once with an error that is both
// ErrAgentLost and ErrTrialInvalid, never a throughput, both ways.
func TestTCPAgentKilledMidTransfer(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	for _, reverse := range []bool{false, true} {
		p := newProxy(t, a.addr)
		c := dial(t, p.addr())
		tt := &agent.TCPTester{Client: c, Reverse: reverse}
		type ret struct {
			run trials.TCPRun
			err error
			at  time.Time
		}
		done := make(chan ret, 1)
		go func() {
			run, err := tt.RunTCP(context.Background(), 0, 2, 30*time.Second)
			done <- ret{run, err, time.Now()}
		}()
		time.Sleep(500 * time.Millisecond)
		t0 := time.Now()
		p.kill()
		var r ret
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("reverse %v: RunTCP still running 5 s after the agent was lost", reverse)
		}
		took := r.at.Sub(t0)
		t.Logf("reverse %v: RunTCP returned %v after the agent was lost: %v", reverse, took, r.err)
		if !errors.Is(r.err, agent.ErrAgentLost) || !errors.Is(r.err, agent.ErrTrialInvalid) {
			t.Errorf("reverse %v: error %v, want ErrAgentLost and ErrTrialInvalid", reverse, r.err)
		}
		if took > time.Second {
			t.Errorf("reverse %v: RunTCP returned %v after the agent was lost, want within 1 s", reverse, took)
		}
		a.waitLog(t, `why="session ended"`)
	}
}

// TestTCPShutdownMidTransfer: the agent shutting down mid-transfer resets
// the trial's connections at once and tells the controller why.
func TestTCPShutdownMidTransfer(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, nil)
	c := dial(t, a.addr)
	conns := runningTCP(t, c, 2, 30*time.Second)
	t0 := time.Now()
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, conns, t0, time.Second)
	select {
	case <-c.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the session did not end")
	}
	var re *agent.RemoteError
	if !errors.As(c.Err(), &re) || re.Code != wire.CodeShutdown {
		t.Errorf("session ended with %v, want the agent's shutdown Error", c.Err())
	}
}

// TestTCPStopDeadline: a transfer whose controller never sends Stop is
// closed by the agent at its stop grace after the transfer's end, with an
// Error saying why.
func TestTCPStopDeadline(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.StopGrace = 300 * time.Millisecond })
	c := dial(t, a.addr)
	t0 := time.Now()
	runningTCP(t, c, 1, 200*time.Millisecond) // read, never closed, no Stop
	a.waitLog(t, "no Stop from the controller by the tcp trial's deadline")
	took := time.Since(t0)
	t.Logf("the agent ended the trial %v after Start", took)
	if took < 500*time.Millisecond || took > 1500*time.Millisecond {
		t.Errorf("the agent ended the trial %v after Start, want the transfer (200 ms) and the stop grace (300 ms) later", took)
	}
	if _, err := c.StopTCP(context.Background(), 5); err == nil {
		t.Error("Stop after the deadline answered with results")
	}
}

// TestTCPAgentBothAtOnce: the RFC 6349 test in both directions at once
// (tcp --both through an agent): a transfer to the agent and one from it
// run beside each other in one session, each counted by its receiver; the
// agent refuses any other second TCP trial (the same way, beside an RTT
// probe, windows above its 64 MiB together, a third) and a UDP trial while
// they run, each with an Error naming why, and the session goes on.
func TestTCPAgentBothAtOnce(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.Policy.MaxRateBps = 1e12 })
	c := dial(t, a.addr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	refused := func(s wire.TCPSetup, code wire.Code, want string) {
		t.Helper()
		_, err := c.SetupTCP(ctx, s)
		var re *agent.RemoteError
		if !errors.As(err, &re) || re.Code != code || !strings.Contains(re.Message, want) {
			t.Errorf("TCPSetup %+v: %v, want a %s Error saying %q", s, err, code, want)
		}
	}
	// Beside an RTT probe, nothing.
	tcpTrial(t, c, wire.TCPSetup{TrialID: 20, Kind: wire.TCPRTT, Streams: 1, Probes: 1})
	refused(wire.TCPSetup{TrialID: 21, Kind: wire.TCPToAgent, Streams: 1, Duration: int64(time.Second)}, wire.CodeProtocol, "a transfer the other way")
	if _, err := c.StopTCP(ctx, 20); err != nil {
		t.Fatal(err)
	}

	const d = time.Second
	to := tcpTrial(t, c, wire.TCPSetup{TrialID: 22, Kind: wire.TCPToAgent, Streams: 1, WindowBytes: 16 << 20, Duration: int64(d)})
	refused(wire.TCPSetup{TrialID: 23, Kind: wire.TCPToAgent, Streams: 1, Duration: int64(d)}, wire.CodeProtocol, "a transfer the other way")
	refused(wire.TCPSetup{TrialID: 24, Kind: wire.TCPFromAgent, Streams: 4, WindowBytes: 16 << 20, Duration: int64(d)}, wire.CodePolicy, "above the agent's 67108864")
	from := tcpTrial(t, c, wire.TCPSetup{TrialID: 25, Kind: wire.TCPFromAgent, Streams: 1, WindowBytes: 1 << 20, Duration: int64(d)})
	refused(wire.TCPSetup{TrialID: 26, Kind: wire.TCPFromAgent, Streams: 1, Duration: int64(d)}, wire.CodeProtocol, "Stop one first")
	udp := wire.TrialSetup{TrialID: 27, Spec: trials.Spec{FrameSize: 64, Streams: []trials.Stream{{ID: 4, Direction: trials.AtoB}},
		RateFPS: 100, Duration: time.Second}, ControllerPort: 40000, Latency: agent.LatencyRoundTrip}
	if _, err := c.Setup(ctx, udp); err == nil || !strings.Contains(err.Error(), "tcp trial 22 is in progress") {
		t.Errorf("UDP TrialSetup beside the tcp trials: %v, want refused", err)
	}
	toConn, fromConn := dialFrom(t, loopback, to), dialFrom(t, loopback, from)
	for _, id := range []uint64{22, 25} {
		if err := c.Start(ctx, id); err != nil {
			t.Fatalf("start %d: %v", id, err)
		}
	}
	// Both run now: this side writes to the agent while it reads what
	// the agent writes.
	var wrote int64
	writeDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			n, err := toConn.Write(buf)
			wrote += int64(n)
			if err != nil {
				writeDone <- err
				return
			}
		}
		writeDone <- toConn.CloseWrite()
	}()
	read, err := io.Copy(io.Discard, fromConn)
	if err != nil {
		t.Fatalf("reading from the agent: %v", err)
	}
	if err := <-writeDone; err != nil {
		t.Fatalf("writing to the agent: %v", err)
	}
	rto, err := c.StopTCP(ctx, 22)
	if err != nil {
		t.Fatal(err)
	}
	rfrom, err := c.StopTCP(ctx, 25)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("to the agent: wrote %d, the agent read %d in %v; from the agent: it wrote %d, read %d", wrote, rto.ReceivedBytes,
		time.Duration(rto.ReceiveSpanNs), rfrom.WrittenBytes, read)
	if wrote == 0 || rto.ReceivedBytes != uint64(wrote) || read == 0 || rfrom.WrittenBytes != uint64(read) {
		t.Errorf("to the agent %d of %d bytes read, from it %d of %d: want every byte of both, and some", rto.ReceivedBytes, wrote, read, rfrom.WrittenBytes)
	}
	// The session goes on, with either kind alone again.
	if _, err := c.SetupTCP(ctx, wire.TCPSetup{TrialID: 28, Kind: wire.TCPRTT, Streams: 1, Probes: 1}); err != nil {
		t.Errorf("an rtt trial after both: %v", err)
	} else if _, err := c.StopTCP(ctx, 28); err != nil {
		t.Error(err)
	}
}

// TestTCPControllerKilledMidBoth: the controller's control connection
// closes while transfers run both ways: the agent closes both trials'
// connections within 2 s and listens again; and two trials never started
// are each closed at their own start deadline.
func TestTCPControllerKilledMidBoth(t *testing.T) {
	leakCheck(t)
	a := startAgent(t, func(c *agent.Config) { c.StartTimeout = 300 * time.Millisecond })
	c := dial(t, a.addr)
	for i, id := range []uint64{30, 31} {
		kind := []wire.TCPKind{wire.TCPToAgent, wire.TCPFromAgent}[i]
		tcpTrial(t, c, wire.TCPSetup{TrialID: id, Kind: kind, Streams: 1, Duration: int64(time.Second)})
	}
	waitFor(t, "both tcp trials closed at their start deadline", func() bool {
		return strings.Count(a.log.String(), "no Start from the controller by the tcp trial's deadline") == 2
	})
	to := tcpTrial(t, c, wire.TCPSetup{TrialID: 32, Kind: wire.TCPToAgent, Streams: 2, Duration: int64(30 * time.Second)})
	conns := runningTCP(t, c, 2, 30*time.Second) // trial 5, from the agent
	for range 2 {
		conns = append(conns, dialFrom(t, loopback, to))
	}
	if err := c.Start(context.Background(), 32); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	c.Close()
	closedWithin(t, conns, t0, 2*time.Second)
	a.waitLog(t, `reason="controller closed the connection"`, "trial=5", "trial=32")
	dial(t, a.addr).Close()
}
