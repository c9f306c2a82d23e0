//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// openXDPEngine opens the xdp transport on a lab's ports; it skips, with
// the reason, only where this kernel cannot run AF_XDP.
func openXDPEngine(t *testing.T, cfg Config) *XDPEngine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := OpenXDP(ctx, cfg)
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatalf("OpenXDP: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// xdpPortsOf is portsOf with the sending threads pinned off the lab DUT's
// CPUs (lab State.TesterCPU): a sender on the DUT's CPU runs the DUT's
// forwarding inside its own transmit calls and is slowed by what it
// measures.
func xdpPortsOf(st *lab.State) Config {
	c := portsOf(st)
	c.TxCPU = st.TesterCPU()
	return c
}

func runXDPTrial(t *testing.T, e *XDPEngine, spec Spec) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := e.Run(ctx, spec)
	if err != nil {
		t.Fatalf("Run(%+v): %v", spec, err)
	}
	for _, s := range r.Streams {
		t.Logf("stream %d %v: intended %.0f offered %.1f fps, sent %d rcvd %d lost %d reord %d dup %d late %d kdrops %d, lat min %d mean %.0f p99 %d max %d ns, tagged %d, maxlag %d",
			s.ID, s.Direction, s.IntendedFPS, s.OfferedFPS, s.Sent, s.Received, s.Lost, s.Reordered, s.Duplicate, s.Late,
			s.KernelDrops, s.Latency.MinNs, s.Latency.MeanNs, s.Latency.P99Ns, s.Latency.MaxNs, s.TaggedLatencyNs, s.MaxLagNs)
	}
	if r.TesterLimited {
		t.Logf("tester-limited: %s", r.TesterLimitReason)
	}
	if r.FlowControlled {
		t.Logf("flow-controlled: %s", r.FlowControlReason)
	}
	for _, p := range r.TxPressure {
		t.Logf("tx pressure %+v", p)
	}
	t.Logf("paths %+v", r.Paths)
	return r
}

// TestXDPLoop: through the lab's kernel DUT, a low-rate bidirectional trial
// arrives complete, in order, with a plausible latency, and Paths says which
// AF_XDP path ran.
func TestXDPLoop(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	e := openXDPEngine(t, portsOf(st))
	p := e.Paths()
	if p.Transport != "xdp" || p.XDP == "" {
		t.Errorf("paths %+v: want transport xdp and the AF_XDP mode", p)
	}
	spec := Spec{FrameSize: 64, RateFPS: 10000, Duration: time.Second, Settle: 300 * time.Millisecond, Learning: 50 * time.Millisecond,
		Streams: []Stream{{ID: 1, Direction: AtoB}, {ID: 2, Direction: BtoA}}}
	r := runXDPUntrammelled(t, e, spec, 3)
	for _, s := range r.Streams {
		if s.Sent != 10000 || s.Lost != 0 || s.Reordered != 0 || s.Duplicate != 0 {
			t.Errorf("stream %d: sent %d lost %d reordered %d duplicate %d; want 10000 sent, none lost, in order", s.ID, s.Sent, s.Lost, s.Reordered, s.Duplicate)
		}
		if s.Latency.MinNs <= 0 || s.Latency.MaxNs > int64(50*time.Millisecond) {
			t.Errorf("stream %d: latency %d … %d ns, want positive and under 50 ms", s.ID, s.Latency.MinNs, s.Latency.MaxNs)
		}
	}
	if r.TesterLimited {
		t.Errorf("tester-limited at 10 kfps, three times: %s", r.TesterLimitReason)
	}
	if a, b := e.ARPAnswered(); a+b == 0 {
		t.Logf("no ARP request from the DUT answered (the DUT had the tester's addresses already)")
	}
}

// TestXDPStamps: through the lab's kernel DUT, a trial with each receive
// stamp forced (metadata, head, user) counts every frame, and Paths says
// which stamp ran; a stamp the kernel's verifier refuses (afxdp.ProbeStamps)
// fails OpenXDP before any traffic with ErrNotSupported naming the refusal.
// The default takes the first stamp the kernel has and names what it fell
// back from. It logs each stamp's latency, the user stamp's offset from the
// kernel's being the error of that fallback.
func TestXDPStamps(t *testing.T) {
	refused, err := afxdp.ProbeStamps()
	if err != nil {
		t.Fatalf("probe the receive stamps: %v", err)
	}
	st := labtest.New(t, lab.Config{})
	spec := Spec{FrameSize: 64, RateFPS: 10000, Duration: time.Second, Settle: 300 * time.Millisecond, Learning: 50 * time.Millisecond,
		Streams: []Stream{{ID: 1, Direction: AtoB}}}
	want := map[string]string{"metadata": "kernel-xdp-meta", "head": "kernel-xdp-head", "user": "user"}
	def := "metadata"
	if refused[afxdp.StampMeta] != "" {
		def = "head"
	}
	for _, stamp := range []string{"", "metadata", "head", "user"} {
		cfg := xdpPortsOf(st)
		cfg.XDPStamp = stamp
		k, _ := afxdp.ParseStamp(stamp)
		if why := refused[k]; why != "" {
			e, err := OpenXDP(context.Background(), cfg)
			if err == nil {
				e.Close()
			}
			if !errors.Is(err, ErrNotSupported) || err == nil || !strings.Contains(err.Error(), why) {
				t.Errorf("stamp %s, refused by the verifier (%s): OpenXDP: %v; want ErrNotSupported naming the refusal", stamp, why, err)
			}
			continue
		}
		e := openXDPEngine(t, cfg)
		p := e.Paths()
		name := stamp
		if name == "" {
			name = def
			if (def != "metadata") != strings.Contains(p.Fallback, "metadata") {
				t.Errorf("default stamp: paths %+v; want the fallback from the metadata stamp named exactly when it was taken", p)
			}
		}
		if p.Timestamps != want[name] {
			t.Errorf("stamp %q: paths %+v, want timestamps %s", stamp, p, want[name])
		}
		r := runXDPTrial(t, e, spec)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		s := r.Streams[0]
		if s.Sent != 10000 || s.Received != s.Sent || s.Lost != 0 || s.Reordered != 0 || s.Duplicate != 0 {
			t.Errorf("stamp %q: sent %d received %d lost %d reordered %d duplicate %d; want 10000 each way, in order", stamp, s.Sent, s.Received, s.Lost, s.Reordered, s.Duplicate)
		}
		if s.Latency.MinNs <= 0 || s.Latency.MaxNs > int64(50*time.Millisecond) {
			t.Errorf("stamp %q: latency %d … %d ns, want positive and under 50 ms", stamp, s.Latency.MinNs, s.Latency.MaxNs)
		}
		t.Logf("stamp %s (%s): latency min %.1f mean %.1f P99 %.1f µs", name, p.Timestamps, float64(s.Latency.MinNs)/1e3, s.Latency.MeanNs/1e3, float64(s.Latency.P99Ns)/1e3)
	}
}

// TestXDPShaped (truth claim "shaped-loss"): a DUT shaped to a rate R
// drawn now (40–200 Mbit/s, 512 or 1518 B, RFC2544_SEED replays) carries a
// 2 s trial at 0.9 R without loss, and a trial at 1.5 R loses about
// 1 − R/offered, not tester-limited; a trial transiently limited by a stall
// of this shared host runs again, at most twice, as in TestAccuracyShaped.
// The path holds what tbf's queue holds, and what waits before it in the
// DUT's input queue (netdev_max_backlog, 1000 frames) when its CPU falls
// behind: the loss's slack counts both.
func TestXDPShaped(t *testing.T) {
	c := truth.New(t, "shaped-loss")
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x2544))
	rateBps := float64(uint64(40e6+rng.Float64()*160e6) / 1000 * 1000)
	frame := []int{512, 1518}[rng.IntN(2)]
	const limit, backlog = 100, 1000
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: uint64(rateBps), LimitPackets: limit}})
	e := openXDPEngine(t, xdpPortsOf(st))
	rFPS := rateBps / (float64(frame-4) * 8)
	kase := fmt.Sprintf("xdp, %d B, R %.0f fps", frame, rFPS)
	rb := runXDPUntrammelled(t, e, oneWay(frame, 0.9*rFPS, 2*time.Second), 3)
	if below := rb.Streams[0]; below.Sent == 0 || rb.TesterLimited {
		t.Errorf("%d B at 90%% of R: sent %d, tester-limited %v (%s); want the DUT's answer", frame, below.Sent, rb.TesterLimited, rb.TesterLimitReason)
	} else {
		c.Within("loss % at 0.9 R", kase, below.LossPercent(), 0, 0)
	}
	ra := runXDPUntrammelled(t, e, oneWay(frame, 1.5*rFPS, 2*time.Second), 3)
	if ra.TesterLimited {
		t.Fatalf("%d B at 150%% of R: tester-limited (%s), want the DUT's loss", frame, ra.TesterLimitReason)
	}
	above := ra.Streams[0]
	ideal := 100 * (1 - rFPS/above.OfferedFPS)
	slack := 100 * (limit + backlog + 0.01*rFPS + 2) / float64(above.Sent)
	c.Within("loss − (1 − R/offered) at 1.5 R, points", kase, above.LossPercent()-ideal, -slack-1, 1)
}

// TestXDPRelayAccounting: on the relay DUT (delay, reordering, duplicates)
// the xdp transport's per-stream counts equal the relay's own, as the raw
// transport's do: the same trial runs on raw, then on xdp, each checked
// against the relay's counters over its own trial.
func TestXDPRelayAccounting(t *testing.T) {
	const d = 2 * time.Millisecond
	st := labtest.New(t, lab.Config{DUT: lab.DUTRelay, Relay: lab.RelayConfig{Delay: d, ReorderPercent: 2,
		ReorderGap: time.Millisecond, DuplicatePercent: 1, Seed: 7}})
	spec := oneWay(64, 5000, 2*time.Second)
	check := func(name string, run func() Result) {
		before, err := st.RelayStats()
		if err != nil {
			t.Fatal(err)
		}
		s := run().Streams[0]
		after, err := st.RelayStats()
		if err != nil {
			t.Fatal(err)
		}
		dup := after.AtoB.Duplicated - before.AtoB.Duplicated
		reo := after.AtoB.Reordered - before.AtoB.Reordered
		t.Logf("%s: reordered %d (relay %d), duplicate %d (relay %d), lost %d, latency min %v", name, s.Reordered, reo, s.Duplicate, dup, s.Lost,
			time.Duration(s.Latency.MinNs))
		if s.Duplicate != dup || dup == 0 {
			t.Errorf("%s: duplicates %d, relay %d; want equal and non-zero", name, s.Duplicate, dup)
		}
		if s.Reordered != reo || reo == 0 {
			t.Errorf("%s: reordered %d, relay %d; want equal and non-zero", name, s.Reordered, reo)
		}
		a, b := after.AtoB, before.AtoB
		if dropped := a.Dropped - b.Dropped + a.Overflow - b.Overflow + a.SocketDrops - b.SocketDrops + a.SendErrors - b.SendErrors; s.Lost != dropped+s.KernelDrops {
			t.Errorf("%s: lost %d; the relay dropped %d and the tester's kernel %d: want equal", name, s.Lost, dropped, s.KernelDrops)
		}
		if m := time.Duration(s.Latency.MinNs); m < d {
			t.Errorf("%s: latency min %v, want at least the relay's %v", name, m, d)
		}
	}
	raw := openEngine(t, portsOf(st))
	check("raw", func() Result { return runTrial(t, raw, spec) })
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
	x := openXDPEngine(t, portsOf(st))
	check("xdp", func() Result { return runXDPTrial(t, x, spec) })
}

// TestXDPTesterLimited: a rate above the xdp generator's ceiling, measured
// now (generator only, 1 s at full speed on port A) and given as the
// engine's calibrated ceiling, is flagged tester-limited, never reported as
// DUT loss or passed. Without the ceiling the lab's kernel DUT is no such
// path once the receiver keeps up: at 64 B the xdp generator outruns its
// forwarding (offered 0.87-1.14 Mfps, forwarded 0.59-0.89 Mfps, 2026-12-01),
// so a trial at 20 Mfps loses frames the DUT could not forward even at the
// load offered, and the skeleton rightly calls that loss the DUT's
// (Result.Overloaded). Measured here: ceilings 1,056,829, 1,075,046 and
// 1,069,429 fps, each trial flagged at the ceiling and behind its plan.
func TestXDPTesterLimited(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := GenerateXDP(ctx, GenConfig{Namespace: st.A.Namespace, Interface: st.A.Interface,
		DstMAC: []byte{0x02, 0, 0, 0, 0, 1}, SrcIP: st.A.IPv4.Addr(), DstIP: st.B.IPv4.Addr(), FrameSize: 64, Duration: time.Second})
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil || g.OfferedFPS <= 0 {
		t.Fatalf("measure the generator's ceiling: %+v, %v", g, err)
	}
	t.Logf("xdp generator ceiling at 64 B: %.0f fps (%d frames in %.3f s)", g.OfferedFPS, g.Sent, g.Seconds)
	cfg := xdpPortsOf(st)
	cfg.CeilingFPS = map[int]float64{64: g.OfferedFPS}
	e := openXDPEngine(t, cfg)
	r := runXDPTrial(t, e, oneWay(64, 20e6, time.Second))
	if !r.TesterLimited || r.TesterLimitTransient || r.Passed(0) || !strings.Contains(r.TesterLimitReason, "calibrated ceiling") {
		t.Errorf("20 Mfps: tester-limited %v (transient %v, %q), passed %v; want flagged lastingly at the calibrated ceiling, not passed",
			r.TesterLimited, r.TesterLimitTransient, r.TesterLimitReason, r.Passed(0))
	}
}

// TestXDPGenerate: the generator-only mode sends every frame of a paced
// second (its rate's accuracy is internal/bench's pacing part) and says
// which AF_XDP path ran.
func TestXDPGenerate(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := GenerateXDP(ctx, GenConfig{Namespace: st.A.Namespace, Interface: st.A.Interface,
		DstMAC: []byte{0x02, 0, 0, 0, 0, 1}, SrcIP: st.A.IPv4.Addr(), DstIP: st.B.IPv4.Addr(), FrameSize: 64, RateFPS: 20000, Duration: time.Second})
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.Sent != 20000 || res.Paths.XDP == "" {
		t.Errorf("sent %d at %.0f fps (path %q), want 20000 and the AF_XDP path", res.Sent, res.OfferedFPS, res.Paths.XDP)
	}
}

// TestCalibrateXDP: CalibrateXDP on a loop (no DUT) measures the xdp
// generator's and receiver's ceilings per size and records them as the xdp
// transport's; an xdp engine given those ceilings flags a trial asked at
// twice the 64 B ceiling tester-limited, naming the ceiling (a lasting
// limit), and never passes it (with no DUT, nothing can be the DUT's).
func TestCalibrateXDP(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pts, err := CalibrateXDP(ctx, xdpPortsOf(st), []int{64, 1518}, time.Second)
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		t.Logf("xdp calibration %d B: offered %.0f received %.0f ceiling %.0f fps, receiver drops %d, paths %+v",
			p.FrameSize, p.OfferedFPS, p.ReceivedFPS, p.CeilingFPS, p.KernelDrops, p.Paths)
		if p.Paths.Transport != "xdp" || p.Paths.XDP == "" {
			t.Errorf("%d B: paths %+v, want the xdp transport and its AF_XDP path", p.FrameSize, p.Paths)
		}
		if !(p.CeilingFPS > 0) || p.CeilingFPS > p.OfferedFPS || p.CeilingFPS > p.ReceivedFPS {
			t.Errorf("%d B: ceiling %.0f of offered %.0f and received %.0f fps, want 0 < ceiling = the lower",
				p.FrameSize, p.CeilingFPS, p.OfferedFPS, p.ReceivedFPS)
		}
	}
	if len(pts) != 2 || pts[0].FrameSize != 64 || pts[1].FrameSize != 1518 {
		t.Fatalf("points %+v, want 64 and 1518 B", pts)
	}
	cfg := xdpPortsOf(st)
	cfg.CeilingFPS = CeilingMap(pts)
	e := openXDPEngine(t, cfg)
	ask := 2 * pts[0].CeilingFPS
	r := runXDPTrial(t, e, oneWay(64, ask, time.Second))
	s := r.Streams[0]
	if !r.TesterLimited || r.Passed(100) {
		t.Errorf("%.0f fps, twice the ceiling: tester-limited %v (%q), passed %v; want flagged, not passed", ask, r.TesterLimited, r.TesterLimitReason, r.Passed(100))
	}
	if !strings.Contains(r.TesterLimitReason, "calibrated ceiling") || r.TesterLimitTransient {
		t.Errorf("twice the ceiling: reason %q (transient %v), want the calibrated ceiling named, a lasting limit", r.TesterLimitReason, r.TesterLimitTransient)
	}
	if s.OfferedFPS >= ask {
		t.Errorf("offered %.0f fps of %.0f asked: more than the calibrated generator sends", s.OfferedFPS, ask)
	}
}
