//go:build linux

package trials

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	r := runUntrammelled(t, e, Spec{FrameSize: 64, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}},
		RateFPS: 10000, Duration: time.Second, Settle: 200 * time.Millisecond, TagAfter: 500 * time.Millisecond}, 3)
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
		t.Errorf("tester-limited at 10 kfps, three times: %s", r.TesterLimitReason)
	}
	// A veth has no qdisc (noqueue): the engine sends through the qdisc path,
	// which is a direct transmit there, rather than bypass it. As root
	// (these tests need it) the sending threads run at nice -10.
	if diff := cmp.Diff(Paths{Transport: "raw", TX: "tx_ring", TxSched: txSchedNice, QdiscBypass: false, RX: "rx_ring", Timestamps: "kernel-sw"}, r.Paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	// Several flows per stream, a jumbo-free large frame, a burst.
	r = runTrial(t, e, Spec{FrameSize: 1518, Streams: []Stream{{ID: 9, Direction: AtoB, Flows: 4}}, BurstFrames: 5000,
		Settle: 200 * time.Millisecond})
	if s := r.Streams[0]; s.Sent != 5000 || s.Received != 5000 || s.Reordered != 0 {
		t.Errorf("4-flow burst: sent %d received %d reordered %d, want 5000, 5000, 0", s.Sent, s.Received, s.Reordered)
	}
}

func TestOpenErrors(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("opening raw sockets needs root; run the tests as root")
	}
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	good := portsOf(st)
	down := good
	if out, err := exec.Command("ip", "-n", st.B.Namespace, "link", "add", "dummy9", "type", "veth", "peer", "name", "dummy8").CombinedOutput(); err != nil {
		t.Fatalf("add a veth left down: %v %s", err, out)
	}
	down.B.Interface = "dummy9"
	missing := good
	missing.A.Interface = "nosuch0"
	silent := good
	silent.A.Gateway = netip.MustParseAddr("198.18.1.77")
	silent.ResolveTimeout = 500 * time.Millisecond
	outside := good
	outside.A.Addr = netip.MustParsePrefix("10.0.0.2/24")
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{name: "no such interface", cfg: missing, want: []string{"port A", "nosuch0", "no interface"}},
		{name: "interface down", cfg: down, want: []string{"port B", "dummy9", "is down", "link set dummy9 up"}},
		{name: "DUT does not answer", cfg: silent, want: []string{"port A", "198.18.1.77", "no ARP reply", "500ms"}},
		{name: "outside the benchmark range", cfg: outside, want: []string{"port a", "10.0.0.2", "RFC 6815"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Open(context.Background(), tt.cfg)
			if err == nil {
				e.Close()
				t.Fatal("Open succeeded, want an error")
			}
			t.Logf("Open: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestRunCancel: cancelling a trial stops transmission, still drains the
// settle wait, and returns the partial result with ctx.Err().
func TestRunCancel(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	goroutines := runtime.NumGoroutine()
	e, err := Open(context.Background(), portsOf(st))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	r, err := e.Run(ctx, oneWay(64, 10000, 10*time.Second))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run error %v, want context.DeadlineExceeded", err)
	}
	s := r.Streams[0]
	if s.Sent < 1000 || s.Sent > 10000 || s.Received != s.Sent {
		t.Errorf("partial trial: sent %d received %d; want ~3000 sent, all received", s.Sent, s.Received)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Every goroutine the engine started has ended.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after Close, %d before Open", n, goroutines)
	}
}

func TestRunValidates(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	cfg := portsOf(st)
	cfg.MaxRateFPS = 1000
	e := openEngine(t, cfg)
	tests := []struct {
		name string
		spec Spec
		want string
	}{
		{name: "above the safety cap", spec: oneWay(64, 5000, time.Second), want: "max_rate_fps"},
		{name: "frame too small", spec: oneWay(60, 100, time.Second), want: "frame_size"},
		{name: "frame above the MTU", spec: oneWay(9000, 100, time.Second), want: "frame_size"},
		{name: "ipv6 frame too small", spec: func() Spec { s := oneWay(64, 100, time.Second); s.IPv6 = true; return s }(), want: "frame_size"},
		{name: "no streams", spec: Spec{FrameSize: 64, RateFPS: 1, Duration: time.Second}, want: "streams"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Run(context.Background(), tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestEngineSendtoPath: without the TX ring the engine sends frame by frame
// and says so.
func TestEngineSendtoPath(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	cfg := portsOf(st)
	cfg.NoTxRing = true
	e := openEngine(t, cfg)
	r := runUntrammelled(t, e, oneWay(128, 5000, 500*time.Millisecond), 3)
	if s := r.Streams[0]; s.Sent != 2500 || s.Received != 2500 {
		t.Errorf("sent %d received %d, want 2500 each", s.Sent, s.Received)
	}
	if r.Paths.TX != "sendto" {
		t.Errorf("paths TX %q, want sendto", r.Paths.TX)
	}
}

// TestCalibrateAndCeiling: calibration on a loop gives a ceiling per size
// (TestCeilingReasons covers how the engine uses it).
func TestCalibrateAndCeiling(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	pts, err := Calibrate(context.Background(), portsOf(st), []int{64, 1518}, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		t.Logf("calibration %+v", p)
		if p.CeilingFPS <= 0 || p.CeilingFPS > p.OfferedFPS || p.Paths.TX != "tx_ring" {
			t.Errorf("%d B: ceiling %.0f fps of %.0f offered via %q: want 0 < ceiling <= offered, tx_ring", p.FrameSize, p.CeilingFPS, p.OfferedFPS, p.Paths.TX)
		}
	}
	if got := CeilingMap(pts); len(got) != 2 || got[64] != pts[0].CeilingFPS {
		t.Errorf("CeilingMap = %v", got)
	}
}

// TestEngineIPv6: IPv6 trials through the kernel DUT, neighbors learned by
// ND; the engine answers the DUT's solicitations for B's address even when
// B's kernel does not have it.
func TestEngineIPv6(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	if out, err := exec.Command("ip", "-n", st.B.Namespace, "-6", "addr", "flush", "dev", st.B.Interface).CombinedOutput(); err != nil {
		t.Fatalf("remove B's IPv6 address from its kernel: %v %s", err, out)
	}
	e := openEngine(t, portsOf(st))
	spec := Spec{FrameSize: 84, IPv6: true, Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}},
		RateFPS: 5000, Duration: 500 * time.Millisecond, Settle: 300 * time.Millisecond}
	runTrial(t, e, spec) // resolves the DUT on both sides (and teaches it ours)
	// Make the DUT forget, so it must solicit B's address during the trial.
	if out, err := exec.Command("ip", "-n", st.DUTNamespace, "-6", "neigh", "flush", "all").CombinedOutput(); err != nil {
		t.Fatalf("flush DUT neighbours: %v %s", err, out)
	}
	r := runUntrammelled(t, e, spec, 3)
	for _, s := range r.Streams {
		if s.Sent != 2500 || s.Received != 2500 {
			t.Errorf("stream %d: sent %d received %d, want 2500 each", s.ID, s.Sent, s.Received)
		}
	}
	if n := e.ports[1].answered.nd.Load(); n == 0 {
		t.Errorf("engine answered no neighbor solicitation on B")
	}
}
