package rfc2544

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

func simSpec(size int, fps float64, d time.Duration) trials.Spec {
	return trials.Spec{FrameSize: size, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}}, RateFPS: fps, Duration: d, Settle: 2 * time.Second}
}

// TestSimBurst checks the burst model against its formula,
// lost = max(0, ceil(N(1 − C/R) − B)), around the longest lossless burst.
func TestSimBurst(t *testing.T) {
	const size = 64
	lr := framing.LineRateFPS(testLink, size)
	sim := &SimDUT{LinkBps: testLink, CapacityFPS: 0.25 * lr, BufferFrames: 3000}
	// Lossless up to B·R/(R−C) = 4000 frames.
	tests := []struct {
		name   string
		frames int64
		lost   uint64
	}{
		{name: "short", frames: 1000, lost: 0},
		{name: "just fits", frames: 4000, lost: 0},
		{name: "one over", frames: 4001, lost: 1},
		{name: "double", frames: 8000, lost: 3000},
		{name: "long", frames: 100000, lost: 72000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := simSpec(size, lr, 0)
			spec.BurstFrames = tt.frames
			res, err := sim.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Streams[0]
			if s.Sent != uint64(tt.frames) || s.Lost != tt.lost || s.Received != s.Sent-s.Lost {
				t.Errorf("sent %d received %d lost %d, want lost %d", s.Sent, s.Received, s.Lost, tt.lost)
			}
			if want := float64(tt.frames) / lr; math.Abs(s.TxSeconds-want) > 1e-12 {
				t.Errorf("tx %g s, want %g", s.TxSeconds, want)
			}
		})
	}
}

func TestSimTimedTrial(t *testing.T) {
	const size = 512
	lr := framing.LineRateFPS(testLink, size)
	tests := []struct {
		name          string
		sim           *SimDUT
		spec          trials.Spec
		sent, lost    uint64
		late          uint64
		limited       bool
		offeredFPS    float64
		lastLossAbove time.Duration // LastLossNs ≥ this, or -1 when nothing lost
	}{
		{name: "below capacity", sim: &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink},
			spec: simSpec(size, 0.4*lr, time.Second), sent: uint64(0.4 * lr), offeredFPS: math.Floor(0.4 * lr), lastLossAbove: -1},
		{name: "above capacity, no buffer", sim: &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink},
			spec: simSpec(size, lr, time.Second), sent: uint64(lr), lost: uint64(lr) - uint64(0.5*lr), offeredFPS: math.Floor(lr), lastLossAbove: 999 * time.Millisecond},
		{name: "short settle makes the queue late", sim: &SimDUT{LinkBps: testLink, CapacityFPS: 1000, BufferFrames: 500},
			spec: func() trials.Spec { s := simSpec(size, 1200, time.Second); s.Settle = 100 * time.Millisecond; return s }(),
			// 200 frames queued at the end, 100 drain in the 0.1 s settle
			// (less the 4 µs serialization): 101 late.
			sent: 1200, lost: 101, late: 101, offeredFPS: 1200, lastLossAbove: 999 * time.Millisecond},
		{name: "tester ceiling", sim: &SimDUT{LinkBps: testLink, TesterCeilingFPS: 10000},
			spec: simSpec(size, 20000, time.Second), sent: 10000, limited: true, offeredFPS: 10000, lastLossAbove: -1},
		{name: "above line rate is tester-limited", sim: &SimDUT{LinkBps: testLink},
			spec: simSpec(size, 2*lr, time.Second), sent: uint64(lr), limited: true, offeredFPS: math.Floor(lr), lastLossAbove: -1},
		{name: "path MTU", sim: &SimDUT{LinkBps: testLink, MaxFrameSize: 500},
			spec: simSpec(size, 1000, time.Second), sent: 1000, lost: 1000, offeredFPS: 1000, lastLossAbove: 999 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.sim.Run(context.Background(), tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			s := res.Streams[0]
			if s.Sent != tt.sent || s.Lost != tt.lost || s.Late != tt.late || res.TesterLimited != tt.limited {
				t.Errorf("sent %d lost %d late %d limited %v, want %d %d %d %v", s.Sent, s.Lost, s.Late, res.TesterLimited, tt.sent, tt.lost, tt.late, tt.limited)
			}
			if math.Abs(s.OfferedFPS-tt.offeredFPS) > 1e-6 || s.IntendedFPS != tt.spec.RateFPS {
				t.Errorf("offered %g intended %g, want %g %g", s.OfferedFPS, s.IntendedFPS, tt.offeredFPS, tt.spec.RateFPS)
			}
			if tt.limited && !strings.Contains(res.TesterLimitReason, "ceiling") {
				t.Errorf("reason %q", res.TesterLimitReason)
			}
			if tt.lastLossAbove < 0 && s.LastLossNs != -1 || tt.lastLossAbove >= 0 && s.LastLossNs < int64(tt.lastLossAbove) {
				t.Errorf("last loss at %d ns, want ≥ %v", s.LastLossNs, tt.lastLossAbove)
			}
			if res.Paths.Transport != "sim" || s.ID != 1 || s.Direction != trials.AtoB {
				t.Errorf("paths %+v stream %d %v", res.Paths, s.ID, s.Direction)
			}
		})
	}
}

// TestSimRandomLoss: LossProbability p loses p of the frames on average,
// and a loss tolerance above p finds the capacity again.
func TestSimRandomLoss(t *testing.T) {
	const size, p = 128, 0.001
	lr := framing.LineRateFPS(testLink, size)
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink, LossProbability: p, Seed: 9}
	var sent, lost uint64
	for range 20 {
		res, err := sim.Run(context.Background(), simSpec(size, 0.1*lr, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		sent += res.Streams[0].Sent
		lost += res.Streams[0].Lost
	}
	if got := float64(lost) / float64(sent); math.Abs(got-p) > p*0.01 {
		t.Errorf("loss ratio %g, want %g", got, p)
	}
	plan := testPlan(nil, size)
	got, err := (&Runner{Tester: sim, Plan: plan}).Throughput(context.Background(), size)
	// Zero loss holds only where a trial sends so few frames that none is
	// unlucky: at 5% of line rate a 1 s trial sends 42,000 frames, and
	// passes with probability e^-42.
	if err != nil || got.Found && got.IntendedPercent > 5 {
		t.Errorf("zero-loss throughput through a lossy DUT: %.3f%% (found %v, %v)", got.IntendedPercent, got.Found, err)
	}
	plan.Throughput.Search = SearchBinary // a loss tolerance is binary's; mlr has goals
	plan.Throughput.LossTolerancePercent = 0.2
	got, err = (&Runner{Tester: sim, Plan: plan}).Throughput(context.Background(), size)
	if err != nil || !got.Found || got.IntendedPercent > 50.1 || got.IntendedPercent < 49 {
		t.Errorf("with 0.2%% tolerance: %.3f%% (found %v, %v), want just below 50%%", got.IntendedPercent, got.Found, err)
	}
}

func TestSimDeterministic(t *testing.T) {
	mk := func(seed uint64) *SimDUT {
		return &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink, BufferFrames: 100, Jitter: time.Microsecond, Noise: 0.01, LossProbability: 1e-4, Seed: seed}
	}
	spec := simSpec(256, 200000, time.Second)
	spec.TagAfter = 500 * time.Millisecond
	run := func(s *SimDUT) []trials.Result {
		var out []trials.Result
		for range 5 {
			r, err := s.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	a, b, c := run(mk(1)), run(mk(1)), run(mk(2))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different results:\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Error("different seeds gave identical results")
	}
	if !a[1].Start.After(a[0].Start) {
		t.Errorf("virtual clock did not advance: %v then %v", a[0].Start, a[1].Start)
	}
}

func TestSimErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sim := &SimDUT{LinkBps: testLink}
	if _, err := sim.Run(ctx, simSpec(64, 1000, time.Second)); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := sim.Run(context.Background(), simSpec(0, 1000, time.Second)); err == nil || !strings.Contains(err.Error(), "frame_size") {
		t.Errorf("bad spec: %v", err)
	}
	burst := simSpec(64, 0, 0)
	burst.BurstFrames = 10
	if _, err := (&SimDUT{}).Run(context.Background(), burst); err == nil || !strings.Contains(err.Error(), "LinkBps") {
		t.Errorf("as-fast-as-possible burst without a line rate: %v", err)
	}
	res, err := sim.Run(context.Background(), burst)
	if err != nil || res.Streams[0].Received != 10 || res.Streams[0].OfferedFPS != framing.LineRateFPS(testLink, 64) {
		t.Errorf("as-fast-as-possible burst: %+v, %v", res.Streams, err)
	}
	if sim.Trials() != 1 {
		t.Errorf("%d trials counted, want 1", sim.Trials())
	}
}

// TestSimTrend: the SimDUT's latency series follows its queue model, so
// the sustained-rate verdict sees a queue that absorbs the excess of a
// trial above capacity (no loss, latency climbing) and estimates the
// capacity from it; below capacity the trial is sustained.
func TestSimTrend(t *testing.T) {
	const c = 3798.0 // 46 Mbit/s at 1518 B through tbf
	tests := []struct {
		name      string
		sim       *SimDUT
		load      float64 // × c
		d         time.Duration
		sustained bool
		binNs     int64
		buffer    float64 // frames queued at the end (not sustained)
	}{
		{name: "below capacity", sim: &SimDUT{CapacityFPS: c, BufferFrames: 1000, BaseLatency: 20 * time.Microsecond},
			load: 0.9, d: time.Second, sustained: true, binNs: 10e6},
		{name: "below capacity, 3 ms relay with 1 ms jitter", sim: &SimDUT{CapacityFPS: c, BufferFrames: 1000, BaseLatency: 3 * time.Millisecond, Jitter: time.Millisecond},
			load: 0.9, d: time.Second, sustained: true, binNs: 10e6},
		{name: "1.19 × C into 1000 frames: no loss, not sustained", sim: &SimDUT{CapacityFPS: c, BufferFrames: 1000, BaseLatency: 20 * time.Microsecond},
			load: 1.19, d: time.Second, binNs: 10e6, buffer: 0.19 * c},
		{name: "1.01 × C for 20 s, 20 ms bins", sim: &SimDUT{CapacityFPS: c, BufferFrames: 1000},
			load: 1.01, d: 20 * time.Second, binNs: 20e6, buffer: 0.01 * c * 20},
		{name: "capacity in bit/s, with jitter", sim: &SimDUT{LinkBps: testLink, CapacityBps: 46e6 * 1538 / 1514, BufferFrames: 1000, Jitter: 50 * time.Microsecond},
			load: 1.1, d: time.Second, binNs: 10e6, buffer: 0.1 * c},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cap := tt.sim.ForwardingFPS(1518)
			res, err := tt.sim.Run(context.Background(), simSpec(1518, tt.load*cap, tt.d))
			if err != nil {
				t.Fatal(err)
			}
			s := res.Streams[0]
			tr := s.Trend
			if tr == nil {
				t.Fatal("no latency trend")
			}
			var n uint64
			for _, k := range tr.Count {
				n += k
			}
			// A trend that does not grow keeps only its fit (TrimSeries).
			if (tr.Count != nil || !tt.sustained) && n != s.Received || tr.BinNs != tt.binNs {
				t.Errorf("trend counts %d frames in bins of %d ns, want the %d received in bins of %d ns", n, tr.BinNs, s.Received, tt.binNs)
			}
			ok, v := res.Sustained()
			t.Logf("offered %.0f fps, lost %d; trend slope %.4g ns/s, rise %d ns, forwarded %.1f fps; sustained %v %+v",
				s.OfferedFPS, s.Lost, tr.SlopeNsPerS, tr.RiseNs, tr.ForwardedFPS, ok, v)
			if s.Lost != 0 {
				t.Errorf("lost %d, want none: the buffer absorbs the excess", s.Lost)
			}
			if ok != tt.sustained {
				t.Fatalf("sustained %v (%s), want %v", ok, v.Reason, tt.sustained)
			}
			if ok {
				return
			}
			if e := v.SustainedFPS/cap - 1; math.Abs(e) > 0.002 {
				t.Errorf("sustained rate ≈ %.1f fps, want the capacity %.1f (error %+.3f %%)", v.SustainedFPS, cap, 100*e)
			}
			if e := v.BufferFrames/tt.buffer - 1; math.Abs(e) > 0.03 {
				t.Errorf("buffer used ≈ %.0f frames, want %.0f ± 3 %%", v.BufferFrames, tt.buffer)
			}
		})
	}
}

// TestSimSearchTrend: through a simulated DUT with a buffer, a throughput
// search's 1 s trials carry the verdict: each lossless trial above the
// capacity (the buffer absorbed it) is not sustained, with the capacity as
// its estimate, and each trial below it is sustained, so a search that
// consumes trials.Result.Sustained can be tested without root.
func TestSimSearchTrend(t *testing.T) {
	const size = 1518
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.05 * testLink, BufferFrames: 1000, BaseLatency: 20 * time.Microsecond,
		Jitter: 10 * time.Microsecond}
	c := sim.ForwardingFPS(size)
	p := testPlan(nil, size)
	p.Trial.Duration = Duration(time.Second)
	p.Throughput.ResolutionPercent = 0.1
	got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	var above, below int
	for _, tr := range got.Trials {
		s := tr.Result.Streams[0]
		ok, v := tr.Result.Sustained()
		t.Logf("step %d: %.0f fps (%.3f × C), lost %d (late %d): sustained %v %s", tr.Step, s.OfferedFPS, s.OfferedFPS/c, s.Lost, s.Late, ok, v.Reason)
		switch {
		case s.Lost > 0:
		case s.OfferedFPS > 1.005*c:
			above++
			if ok || math.Abs(v.SustainedFPS/c-1) > 0.002 {
				t.Errorf("step %d at %.3f × C, no loss: sustained %v, estimate %.1f fps; want not sustained, %.1f", tr.Step, s.OfferedFPS/c, ok, v.SustainedFPS, c)
			}
		case s.OfferedFPS < c:
			below++
			if !ok {
				t.Errorf("step %d at %.3f × C: not sustained (%s)", tr.Step, s.OfferedFPS/c, v.Reason)
			}
		}
	}
	if above == 0 || below == 0 {
		t.Errorf("%d lossless trials above the capacity, %d below; want some of each (reported %.0f fps, capacity %.0f)", above, below, got.FPS, c)
	}
}
