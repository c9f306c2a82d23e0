//go:build linux

package trials_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// labXDP opens the xdp transport on a lab, its sending thread off the DUT's
// CPUs, and skips the test where AF_XDP cannot run. Its XDP program takes
// the test frames from a raw engine's receiver while it is open.
func labXDP(t testing.TB, st *lab.State) *trials.XDPEngine {
	t.Helper()
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4, Addr6: p.IPv6, Gateway6: p.GatewayV6}
	}
	cfg := trials.Config{A: pc(st.A), B: pc(st.B), TxCPU: st.TesterCPU()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := trials.OpenXDP(ctx, cfg)
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatalf("OpenXDP: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the xdp engine: %v", err)
		}
	})
	return e
}

// labTesters opens both transports on a lab: the UDP engine (kernel sockets
// in the tester namespaces) and the raw engine using the interfaces' own
// MACs, so the DUT's neighbor entries suit both. Sending threads stay off
// the DUT's CPUs.
func labTesters(t testing.TB, st *lab.State) (udp *trials.UDPEngine, raw *trials.Engine) {
	t.Helper()
	txCPU := st.TesterCPU()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := trials.OpenUDP(ctx, trials.UDPConfig{
		A:       trials.UDPPortConfig{Namespace: st.A.Namespace, Addr: st.A.IPv4.Addr(), Addr6: st.A.IPv6.Addr()},
		B:       trials.UDPPortConfig{Namespace: st.B.Namespace, Addr: st.B.IPv4.Addr(), Addr6: st.B.IPv6.Addr()},
		PathMTU: min(st.A.MTU, st.B.MTU),
		TxCPU:   txCPU,
	})
	if err != nil {
		t.Fatalf("OpenUDP: %v", err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Errorf("close the udp engine: %v", err)
		}
	})
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4, Addr6: p.IPv6, Gateway6: p.GatewayV6}
	}
	e, err := trials.Open(ctx, trials.Config{A: pc(st.A), B: pc(st.B), UseInterfaceMAC: true, TxCPU: txCPU})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("close the raw engine: %v", err)
		}
	})
	return u, e
}

func logResult(t *testing.T, name string, r trials.Result) {
	t.Helper()
	for _, s := range r.Streams {
		t.Logf("%s stream %d %v: intended %.0f offered %.0f received %.0f fps, sent %d rcvd %d lost %d reord %d kdrops %d, latency p50 %d ns, max lag %.1f ms",
			name, s.ID, s.Direction, s.IntendedFPS, s.OfferedFPS, s.ReceivedFPS(), s.Sent, s.Received, s.Lost, s.Reordered, s.KernelDrops, s.Latency.P50Ns, float64(s.MaxLagNs)/1e6)
	}
	if r.TesterLimited {
		t.Logf("%s tester-limited (transient %v): %s", name, r.TesterLimitTransient, r.TesterLimitReason)
	}
	if r.FlowControlled {
		t.Logf("%s flow-controlled: %s", name, r.FlowControlReason)
	}
	if r.OverloadReason != "" {
		t.Logf("%s overloaded: %s", name, r.OverloadReason)
	}
	for _, p := range r.TxPressure {
		t.Logf("%s tx pressure %+v", name, p)
	}
}

// TestBidirectionalAsymmetric: through a DUT shaped to 40 Mbit/s A->B and
// 20 Mbit/s B->A, both transports' bidirectional trials (RFC 2544 §14)
// report each direction's own rate: at 95 % of the slower direction both
// directions pass; at 95 % of the faster one A->B still passes, B->A gets
// through at its own shaped rate (within 3 %), and the trial fails. Truth
// claim "bidirectional".
func TestBidirectionalAsymmetric(t *testing.T) {
	c := truth.New(t, "bidirectional")
	const ab, ba, size = 40e6, 20e6, 512
	st := labtest.New(t, lab.Config{
		AtoB: lab.Shaping{RateBps: ab, BurstBytes: 3100, LimitPackets: 50},
		BtoA: lab.Shaping{RateBps: ba, BurstBytes: 3100, LimitPackets: 50},
	})
	udp, raw := labTesters(t, st)
	fps := func(bps float64) float64 { return bps / (float64(size-4) * 8) }
	bidir := []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}}
	for _, tc := range []struct {
		name   string
		tester rfc2544.Tester
	}{{"udp", udp}, {"raw", raw}} {
		t.Run(tc.name, func(t *testing.T) {
			// run runs a trial again, as rfc2544's runner does, when a
			// stall of this host spoiled it (a transient tester limit).
			run := func(rate float64) trials.Result {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				for attempt := 0; ; attempt++ {
					r, err := tc.tester.Run(ctx, trials.Spec{FrameSize: size, Streams: bidir, RateFPS: rate, Duration: time.Second, Settle: 200 * time.Millisecond})
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
					logResult(t, tc.name, r)
					if !r.TesterLimitTransient || attempt == rfc2544.DefaultRetries {
						return r
					}
				}
			}
			slow := run(0.95 * fps(ba))
			if slow.TesterLimited {
				t.Fatalf("at 95%% of B->A's rate: tester-limited (%s)", slow.TesterLimitReason)
			}
			c.Within(tc.name+": loss % both ways at 0.95 × the slower rate", "", slow.LossPercent(), 0, 0)
			fast := run(0.95 * fps(ab))
			if fast.Passed(0) || fast.TesterLimited {
				t.Fatalf("at 95%% of A->B's rate: passed %v tester-limited %v (%s), want a failed trial", fast.Passed(0), fast.TesterLimited, fast.TesterLimitReason)
			}
			a, _ := fast.Direction(trials.AtoB)
			b, _ := fast.Direction(trials.BtoA)
			c.Within(tc.name+": A->B loss % at 0.95 × its rate, B->A overloaded", "", a.LossPercent(), 0, 0)
			c.Ratio(tc.name+": B->A received / its shaped rate, overloaded", "", fps(ba), b.ReceivedFPS(), 0.97, 1.03)
			t.Logf("A->B offered %.0f received %.0f fps; B->A offered %.0f received %.0f fps (shaped %.0f)", a.OfferedFPS, a.ReceivedFPS(), b.OfferedFPS, b.ReceivedFPS(), fps(ba))
		})
	}
}

// TestLabIPv6 runs IPv6 trials (RFC 5180) through the router lab on both
// transports: the 84-byte minimum and 1518 bytes, bidirectional, two
// flows per stream, nothing lost at a modest rate.
func TestLabIPv6(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	udp, raw := labTesters(t, st)
	for _, tc := range []struct {
		name   string
		tester rfc2544.Tester
	}{{"udp", udp}, {"raw", raw}} {
		for _, size := range []int{84, 1518} {
			var r trials.Result
			for try := 0; ; try++ {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				var err error
				r, err = tc.tester.Run(ctx, trials.Spec{FrameSize: size, IPv6: true, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB, Flows: 2}, {ID: 2, Direction: trials.BtoA, Flows: 2}},
					RateFPS: 5000, Duration: 500 * time.Millisecond, Settle: 200 * time.Millisecond})
				cancel()
				if err != nil {
					t.Fatalf("%s %d B: %v", tc.name, size, err)
				}
				logResult(t, tc.name, r)
				// A stall of this host (the engine marks it
				// transient) runs the trial again, at most twice.
				if !r.TesterLimitTransient || try == 2 {
					break
				}
			}
			if !r.Passed(0) {
				t.Errorf("%s IPv6 %d B: did not pass at 0%% loss", tc.name, size)
			}
			for _, s := range r.Streams {
				if s.Sent != 2500 || s.Received != 2500 {
					t.Errorf("%s IPv6 %d B stream %d: sent %d received %d, want 2500 both", tc.name, size, s.ID, s.Sent, s.Received)
				}
			}
		}
		// Below the IPv6 minimum: a clear error, no traffic.
		_, err := tc.tester.Run(context.Background(), trials.Spec{FrameSize: 64, IPv6: true, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, RateFPS: 10, Duration: time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "84") {
			t.Errorf("%s: 64-byte IPv6 trial: %v; want an error naming the 84-byte minimum", tc.name, err)
		}
	}
}

// TestBidirectionalSearchAsymmetric: rfc2544's bidirectional throughput
// search on the UDP transport through a DUT shaped to 40 Mbit/s A->B and
// 20 Mbit/s B->A finds the slower direction's rate (a bidirectional trial
// passes only if both pass), and throughput.per_direction finds each
// direction's own rate alone, each within −3 % … +3 %, each found and not
// tester-limited. Truth claim "bidirectional".
func TestBidirectionalSearchAsymmetric(t *testing.T) {
	c := truth.New(t, "bidirectional")
	const ab, ba, size = 40e6, 20e6, 512
	st := labtest.New(t, lab.Config{
		AtoB: lab.Shaping{RateBps: ab, BurstBytes: 3100, LimitPackets: 50},
		BtoA: lab.Shaping{RateBps: ba, BurstBytes: 3100, LimitPackets: 50},
	})
	udp, _ := labTesters(t, st)
	fps := func(bps float64) float64 { return bps / (float64(size-4) * 8) }
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := &rfc2544.Runner{Tester: udp, Plan: rfc2544.Plan{
		Profile: rfc2544.ProfileQuick, Tests: []rfc2544.Test{rfc2544.TestThroughput}, FrameSizes: []int{size},
		LinkBps: 100e6, NoProbe: true, Bidirectional: true,
		Trial: rfc2544.TrialConfig{Duration: rfc2544.Duration(700 * time.Millisecond), Settle: rfc2544.Duration(100 * time.Millisecond)},
		// R(B->A) is 20.9 % and R(A->B) 41.9 % of the 100 Mbit/s "line".
		Throughput: rfc2544.ThroughputConfig{ResolutionPercent: 0.5, InitialPercent: 50, MinPercent: 10, MaxPercent: 50, PerDirection: true},
	}}
	res, err := r.Throughput(ctx, size)
	if err != nil {
		t.Fatal(err)
	}
	within := func(name string, got, want float64) {
		c.Ratio("search: "+name+" / its shaped rate", "udp, 512 B, 40/20 Mbit/s, 50-packet queue", want, got, 0.97, 1.03)
	}
	if !res.Found || res.TesterLimited {
		t.Fatalf("bidirectional: found %v, tester-limited %v (%s): want the DUT's throughput", res.Found, res.TesterLimited, res.Reason)
	}
	within("bidirectional, per stream", res.FPS/2, fps(ba))
	if len(res.Directions) != 2 {
		t.Fatalf("got %d directions, want 2", len(res.Directions))
	}
	for _, d := range res.Directions {
		t.Logf("%v in the reported trial: offered %.0f received %.0f fps", d.Direction, d.OfferedFPS, d.ReceivedFPS)
		if d.Alone == nil || !d.Alone.Found || d.Alone.TesterLimited {
			t.Fatalf("%v: per-direction throughput %+v: want found, not tester-limited", d.Direction, d.Alone)
		}
		want := map[trials.Direction]float64{trials.AtoB: fps(ab), trials.BtoA: fps(ba)}[d.Direction]
		within(d.Direction.String()+" alone", d.Alone.FPS, want)
	}
}
