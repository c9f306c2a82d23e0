//go:build linux

package trials

import (
	"context"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// portsOf maps a lab's tester ports to engine ports (what the CLI does).
func portsOf(st *lab.State) Config {
	pc := func(p lab.Port) PortConfig {
		return PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4,
			Addr6: p.IPv6, Gateway6: p.GatewayV6}
	}
	return Config{A: pc(st.A), B: pc(st.B)}
}

func openEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func runTrial(t *testing.T, e *Engine, spec Spec) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := e.Run(ctx, spec)
	if err != nil {
		t.Fatalf("Run(%+v): %v", spec, err)
	}
	for _, s := range r.Streams {
		t.Logf("stream %d %v: intended %.0f offered %.1f fps, sent %d rcvd %d lost %d reord %d dup %d late %d kdrops %d, lat min %d mean %.0f p99 %d max %d ns, tagged %d, lastloss %d, maxlag %d",
			s.ID, s.Direction, s.IntendedFPS, s.OfferedFPS, s.Sent, s.Received, s.Lost, s.Reordered, s.Duplicate, s.Late,
			s.KernelDrops, s.Latency.MinNs, s.Latency.MeanNs, s.Latency.P99Ns, s.Latency.MaxNs, s.TaggedLatencyNs, s.LastLossNs, s.MaxLagNs)
	}
	if r.TesterLimited {
		t.Logf("tester-limited: %s", r.TesterLimitReason)
	}
	t.Logf("paths %+v", r.Paths)
	return r
}

func TestEngineLoop(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	e := openEngine(t, portsOf(st))
	// The kernel of namespace B and the engine both answer for B's address,
	// with B's interface MAC and the engine's emulated MAC: either is right.
	var peer [6]byte
	copy(peer[:], st.A.PeerMAC)
	if got := e.DUTMAC(0); got != st.A.PeerMAC.String() && got != macOf(emulatedMAC(peer)).String() {
		t.Errorf("learned MAC on A = %s, want %s (B's MAC) or %s (B's emulated MAC)", got, st.A.PeerMAC, macOf(emulatedMAC(peer)))
	}
	r := runTrial(t, e, Spec{FrameSize: 64, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}},
		RateFPS: 10000, Duration: time.Second, Settle: 200 * time.Millisecond, TagAfter: 500 * time.Millisecond})
	for _, s := range r.Streams {
		if s.Sent != 10000 || s.Received != s.Sent || s.Lost != 0 || s.Duplicate != 0 || s.Late != 0 {
			t.Errorf("stream %d: sent %d received %d lost %d dup %d late %d, want 10000 all received", s.ID, s.Sent, s.Received, s.Lost, s.Duplicate, s.Late)
		}
		if s.Latency.Count != s.Received || s.Latency.MinNs <= 0 || s.Latency.MaxNs > int64(50*time.Millisecond) {
			t.Errorf("stream %d latency %+v: want every frame timed, 0 < min, max < 50ms", s.ID, s.Latency)
		}
		if s.TaggedLatencyNs < 0 {
			t.Errorf("stream %d: no tagged latency", s.ID)
		}
	}
	if r.TesterLimited {
		t.Errorf("tester-limited: %s", r.TesterLimitReason)
	}
}
