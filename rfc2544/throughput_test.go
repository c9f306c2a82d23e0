package rfc2544

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// TestThroughputGrid searches DUTs of 5% to 100% of line rate, with and
// without run-to-run noise. With no buffer the truth is the capacity C; with
// Noise n each trial's capacity lies in [C(1−n), C], so the result must lie
// in [C(1−n) − resolution, C] and never above C.
func TestThroughputGrid(t *testing.T) {
	for _, noise := range []float64{0, 0.02} {
		for _, size := range []int{64, 512, 1518} {
			for c := 5.0; c <= 100; c += 5 {
				name := fmt.Sprintf("noise=%g/size=%d/capacity=%g%%", noise, size, c)
				t.Run(name, func(t *testing.T) {
					sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, Noise: noise, Seed: uint64(c * 7)}
					p := testPlan([]Test{TestThroughput}, size)
					p.Throughput.ResolutionPercent = 0.5
					r := &Runner{Tester: sim, Plan: p, Sleep: noSleep}
					got, err := r.Throughput(context.Background(), size)
					if err != nil {
						t.Fatal(err)
					}
					if !got.Found {
						t.Fatalf("no throughput found: %s", got.Reason)
					}
					lo := c*(1-noise) - p.Throughput.ResolutionPercent
					if got.IntendedPercent > c+1e-9 || got.IntendedPercent < lo-1e-9 {
						t.Errorf("throughput %.4f%%, want in [%.4f, %.4f]\n%s", got.IntendedPercent, lo, c, logTable(got.Trials))
					}
					lr := framing.LineRateFPS(testLink, size)
					if want := got.IntendedPercent / 100 * lr; math.Abs(got.FPS-want) > 1.5/p.Trial.Duration.D().Seconds() {
						t.Errorf("FPS %.1f, want the offered rate %.1f", got.FPS, want)
					}
					if math.Abs(got.L1Bps-framing.L1Bps(got.FPS, size)) > 1e-6 || math.Abs(got.L2Bps-framing.L2Bps(got.FPS, size)) > 1e-6 {
						t.Errorf("L1/L2 %g/%g do not match FPS %g", got.L1Bps, got.L2Bps, got.FPS)
					}
					if got.LineRateFPS != lr {
						t.Errorf("LineRateFPS %g, want %g", got.LineRateFPS, lr)
					}
					if n := len(got.Trials); n > p.Throughput.MaxTrials {
						t.Errorf("%d trials, above the cap", n)
					}
				})
			}
		}
	}
}

// TestThroughputBuffer shows what short trials do: a DUT with a buffer of B
// frames forwards a T-second trial at C + B/T without loss, and a search that
// lets a trial whose queue grew pass (allow_buffering) finds that rate, not C
// (the reason RFC 2544 asks for 60 s trials).
func TestThroughputBuffer(t *testing.T) {
	tests := []struct {
		name     string
		duration time.Duration
		buffer   int64
	}{
		{name: "1s trial 20k frames", duration: time.Second, buffer: 20000},
		{name: "60s trial 20k frames", duration: time.Minute, buffer: 20000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const size, c = 64, 40.0
			lr := framing.LineRateFPS(testLink, size)
			// Lossless iff (R−C)·T ≤ B and what is queued at the end
			// drains within the settle wait: the queue at the end is B at
			// most, and C drains B frames in B/C ≤ 0.2 s here.
			truth := c + float64(tt.buffer)/tt.duration.Seconds()/lr*100
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: tt.buffer}
			p := testPlan(nil, size)
			p.Trial.Duration = Duration(tt.duration)
			p.Throughput.AllowBuffering = true
			p.Throughput.Search = SearchBinary
			p.Throughput.ResolutionPercent = 0.1
			got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if got.IntendedPercent > truth || got.IntendedPercent < truth-0.1 {
				t.Errorf("binary: throughput %.4f%%, want in [%.4f, %.4f]", got.IntendedPercent, truth-0.1, truth)
			}
			// mlr: short trials first, but only final trials decide, so
			// it lands on the truth of their duration (trial.duration;
			// QuickMinFinalDuration when that is the quick profile's 1 s),
			// within its relative width.
			p.Throughput.Search = SearchMLR
			p.Throughput.ResolutionPercent = 0
			fin := p.Goals()[0].FinalDuration.D()
			want := tt.duration
			if tt.duration == quickTrialDuration.D() {
				want = QuickMinFinalDuration.D()
			}
			if fin != want {
				t.Fatalf("quick profile with trial.duration %v: final trials of %v, want %v", tt.duration, fin, want)
			}
			truth = c + float64(tt.buffer)/fin.Seconds()/lr*100
			got, err = (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if lo := truth * (1 - DefaultGoalWidthPercent/100); got.IntendedPercent > truth || got.IntendedPercent < lo {
				t.Errorf("mlr: throughput %.4f%%, want in [%.4f, %.4f]\n%s", got.IntendedPercent, lo, truth, logTable(got.Trials))
			}
		})
	}
}

// TestThroughputLossTolerance: with acceptable loss L the search finds the
// load where the loss 1 − C/R crosses L: R* = C / (1 − L/100).
func TestThroughputLossTolerance(t *testing.T) {
	for _, tol := range []float64{0.01, 0.5, 1, 5, 20} {
		t.Run(fmt.Sprintf("tolerance=%g%%", tol), func(t *testing.T) {
			const c = 40.0
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
			p := testPlan(nil, 256)
			p.Throughput.Search = SearchBinary
			p.Throughput.LossTolerancePercent = tol
			p.Throughput.ResolutionPercent = 0.2
			got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), 256)
			if err != nil {
				t.Fatal(err)
			}
			cross := min(100, c/(1-tol/100))
			if got.IntendedPercent > cross+1e-9 || got.IntendedPercent < cross-0.2 {
				t.Errorf("throughput %.4f%%, want within 0.2 below %.4f\n%s", got.IntendedPercent, cross, logTable(got.Trials))
			}
			last := got.Trials[len(got.Trials)-1]
			for _, tr := range got.Trials {
				if tr.Outcome == OutcomePass && tr.LossPercent > tol {
					t.Errorf("step %d passed with %.4f%% loss above the tolerance", tr.Step, tr.LossPercent)
				}
			}
			_ = last
		})
	}
}

func TestThroughputSearchModes(t *testing.T) {
	tests := []struct {
		name      string
		search    Search
		capacity  float64 // % of line rate
		found     bool
		lo, hi    float64 // wanted throughput range
		loads     []float64
		reasonHas string
	}{
		{name: "step stops at the first failure", search: SearchStep, capacity: 47, found: true, lo: 40, hi: 40,
			loads: []float64{10, 20, 30, 40, 50}},
		{name: "step reaches max", search: SearchStep, capacity: 100, found: true, lo: 100, hi: 100,
			loads: []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
		{name: "step first load fails", search: SearchStep, capacity: 5, found: false,
			loads: []float64{10}, reasonHas: "start_percent"},
		{name: "combo refines between last pass and first fail", search: SearchCombo, capacity: 47, found: true, lo: 46.5, hi: 47},
		{name: "combo below the first step", search: SearchCombo, capacity: 5, found: true, lo: 4.5, hi: 5},
		{name: "binary", search: SearchBinary, capacity: 47, found: true, lo: 46.5, hi: 47},
		{name: "binary nothing passes", search: SearchBinary, capacity: 0.05, found: false, reasonHas: "even the minimum load, 0.1%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: tt.capacity / 100 * testLink}
			p := testPlan(nil, 128)
			p.Throughput.Search = tt.search
			p.Throughput.ResolutionPercent = 0.5
			got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), 128)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != tt.found {
				t.Fatalf("Found = %v (%s), want %v\n%s", got.Found, got.Reason, tt.found, logTable(got.Trials))
			}
			if tt.found && (got.IntendedPercent < tt.lo-1e-9 || got.IntendedPercent > tt.hi+1e-9) {
				t.Errorf("throughput %.4f%%, want in [%g, %g]\n%s", got.IntendedPercent, tt.lo, tt.hi, logTable(got.Trials))
			}
			if !tt.found {
				if got.FPS != 0 || got.IntendedPercent != 0 {
					t.Errorf("no throughput but rates are set: %+v", got)
				}
				if !strings.Contains(got.Reason, tt.reasonHas) {
					t.Errorf("reason %q does not contain %q", got.Reason, tt.reasonHas)
				}
			}
			if tt.loads != nil {
				var loads []float64
				for _, tr := range got.Trials {
					loads = append(loads, tr.IntendedPercent)
				}
				if fmt.Sprint(loads) != fmt.Sprint(tt.loads) {
					t.Errorf("loads %v, want %v", loads, tt.loads)
				}
			}
		})
	}
}

// TestThroughputTesterLimited: a tester that cannot reach the DUT's
// capacity gets "≥ X, tester-limited", never a figure above its ceiling; a
// tester whose ceiling is above the DUT's capacity still finds it.
func TestThroughputTesterLimited(t *testing.T) {
	const size = 64
	lr := framing.LineRateFPS(testLink, size)
	tests := []struct {
		name            string
		capacity, ceil  float64 // % of line rate
		search          Search
		limited         bool
		wantLo, wantHi  float64
		wantLimitInNote bool
	}{
		{name: "ceiling below capacity binary", capacity: 80, ceil: 30, search: SearchBinary, limited: true, wantLo: 29.9, wantHi: 30},
		{name: "ceiling below capacity step", capacity: 80, ceil: 33, search: SearchStep, limited: true, wantLo: 30, wantHi: 33},
		{name: "ceiling below capacity combo", capacity: 80, ceil: 33, search: SearchCombo, limited: true, wantLo: 30, wantHi: 33},
		{name: "ceiling above capacity", capacity: 40, ceil: 60, search: SearchBinary, limited: false, wantLo: 39.5, wantHi: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ceilFPS := tt.ceil / 100 * lr
			sim := &SimDUT{LinkBps: testLink, CapacityBps: tt.capacity / 100 * testLink, TesterCeilingFPS: ceilFPS}
			p := testPlan(nil, size)
			p.Throughput.Search = tt.search
			p.Throughput.ResolutionPercent = 0.5
			got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Found || got.TesterLimited != tt.limited {
				t.Fatalf("Found %v TesterLimited %v (%s), want found, limited %v\n%s", got.Found, got.TesterLimited, got.Reason, tt.limited, logTable(got.Trials))
			}
			if got.FPS > ceilFPS*(1+1e-9) {
				t.Errorf("throughput %.0f fps above the tester's ceiling %.0f", got.FPS, ceilFPS)
			}
			if got.OfferedPercent < tt.wantLo-1e-6 || got.OfferedPercent > tt.wantHi+1e-6 {
				t.Errorf("offered %.4f%%, want in [%g, %g]\n%s", got.OfferedPercent, tt.wantLo, tt.wantHi, logTable(got.Trials))
			}
			if tt.limited {
				if got.TesterLimitReason == "" {
					t.Error("no tester-limit reason")
				}
				last := got.Trials[len(got.Trials)-1]
				if last.Outcome != OutcomeTesterLimited || last.OfferedPercent >= last.IntendedPercent {
					t.Errorf("last trial %s offered %.2f%% of intended %.2f%%: want a tester-limited trial with offered < intended", last.Outcome, last.OfferedPercent, last.IntendedPercent)
				}
			}
		})
	}
}

func TestThroughputBidirectional(t *testing.T) {
	const size, c = 256, 30.0
	sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
	p := testPlan(nil, size)
	p.Bidirectional = true
	got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	lr := framing.LineRateFPS(testLink, size)
	if got.LineRateFPS != 2*lr {
		t.Errorf("LineRateFPS %g, want both directions %g", got.LineRateFPS, 2*lr)
	}
	if got.IntendedPercent > c || got.IntendedPercent < c*(1-DefaultGoalWidthPercent/100) {
		t.Errorf("throughput %.3f%% per direction, want just below %g", got.IntendedPercent, c)
	}
	if want := 2 * got.IntendedPercent / 100 * lr; math.Abs(got.FPS-want) > 2 {
		t.Errorf("FPS %.1f, want the sum of both streams %.1f", got.FPS, want)
	}
	for _, tr := range got.Trials {
		if n := len(tr.Result.Spec.Streams); n != 2 {
			t.Fatalf("trial with %d streams", n)
		}
	}
}

func TestThroughputOneDirectionFails(t *testing.T) {
	// A bidirectional trial passes only if both directions pass: a tester
	// whose B->A stream always loses a frame finds no throughput.
	p := testPlan(nil, 64)
	p.Bidirectional = true
	p.NoProbe = true
	tester := lossyStream{inner: &SimDUT{LinkBps: testLink}, id: 2}
	got, err := (&Runner{Tester: tester, Plan: p}).Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	if got.Found {
		t.Errorf("found %.2f%% although stream 2 lost frames in every trial", got.IntendedPercent)
	}
}

func TestThroughputTrialCap(t *testing.T) {
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.33 * testLink}
	p := testPlan(nil, 64)
	p.Throughput.Search = SearchBinary
	p.Throughput.MaxTrials = 4
	p.Throughput.ResolutionPercent = 0.01
	got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Trials) != 4 || !got.Found || !strings.Contains(got.Note, "max_trials = 4") {
		t.Errorf("%d trials, found %v, note %q: want 4 trials, found, a note about the cap", len(got.Trials), got.Found, got.Note)
	}
	if got.IntendedPercent > 33 {
		t.Errorf("throughput %.3f%% above the capacity", got.IntendedPercent)
	}
}

// TestPathProbe: a path MTU of 1500 bytes lets 1280-byte frames through and
// loses every 1518-byte frame: that size reports zero throughput with the
// reason, after one probe and no search.
func TestPathProbe(t *testing.T) {
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink, MaxFrameSize: 1500}
	p := testPlan([]Test{TestThroughput, TestLatency, TestFrameLoss, TestBackToBack, TestRecovery}, 1280, 1518)
	res, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Probes) != 2 || !res.Probes[0].Passed || res.Probes[1].Passed {
		t.Fatalf("probes %+v: want 1280 passed, 1518 failed", res.Probes)
	}
	const want = "frame size 1518 does not pass the path (MTU?): none of 100 probe frames came through while 1280-byte frames did; reported as zero throughput per RFC 2544 §9.4"
	tp := res.Throughput[1]
	if tp.Found || tp.Reason != want || len(tp.Trials) != 0 {
		t.Errorf("1518: found %v, reason %q, %d trials; want not found, reason %q, no search", tp.Found, tp.Reason, len(tp.Trials), want)
	}
	if !res.Throughput[0].Found {
		t.Errorf("1280 not found: %s", res.Throughput[0].Reason)
	}
	for name, skipped := range map[string]string{
		"latency": res.Latency[1].Skipped, "frame_loss": res.FrameLoss[1].Skipped,
		"back_to_back": res.BackToBack[1].Skipped, "system_recovery": res.Recovery[1].Skipped,
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("%s at 1518 skipped %q, want the probe's reason", name, skipped)
		}
	}
	if got := res.Probes[1].Trial; got.Test != TestProbe || got.Outcome != OutcomeFail || res.Probes[0].Trial.Outcome != OutcomePass {
		t.Errorf("probe trials recorded as %q %s and %s, want probe, pass then fail", got.Test, res.Probes[0].Trial.Outcome, got.Outcome)
	}

	t.Run("first size fails", func(t *testing.T) {
		r := &Runner{Tester: &SimDUT{LinkBps: testLink, MaxFrameSize: 1000}, Plan: testPlan(nil, 1024)}
		got, err := r.Throughput(context.Background(), 1024)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found || !strings.Contains(got.Reason, "does not pass the path") {
			t.Errorf("got found %v reason %q", got.Found, got.Reason)
		}
	})
	t.Run("no probe searches and fails", func(t *testing.T) {
		p := testPlan(nil, 1518)
		p.NoProbe = true
		r := &Runner{Tester: &SimDUT{LinkBps: testLink, MaxFrameSize: 1500}, Plan: p}
		got, err := r.Throughput(context.Background(), 1518)
		if err != nil {
			t.Fatal(err)
		}
		if got.Found || !strings.Contains(got.Reason, "even the minimum") || len(got.Trials) == 0 {
			t.Errorf("got found %v reason %q after %d trials", got.Found, got.Reason, len(got.Trials))
		}
	})
}

// TestSearchLog prints a binary search log as the markdown table commercial
// testers show (go test -run TestSearchLog -v).
func TestSearchLog(t *testing.T) {
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.623 * testLink, BufferFrames: 512,
		BaseLatency: 20 * time.Microsecond, Jitter: 4 * time.Microsecond, Noise: 0.003, Seed: 42}
	p := testPlan(nil, 512)
	p.Trial.Duration = Duration(10 * time.Second)
	p.Throughput.ResolutionPercent = 0.5
	got, err := (&Runner{Tester: sim, Plan: p}).Throughput(context.Background(), 512)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.IntendedPercent > 62.3+0.2 { // + B/T: 512 frames in 10 s is 0.02% at 512 bytes
		t.Fatalf("throughput %+v", got)
	}
	t.Logf("throughput at 512 bytes, DUT at 62.3%% of 1 Gbit/s, 10 s trials: %.3f%% (%.0f fps, %.1f Mbit/s L1)\n\n%s",
		got.IntendedPercent, got.FPS, got.L1Bps/1e6, logTable(got.Trials))
}

// TestTestCenterSequence replays the binary search of a Spirent TestCenter
// RFC 2544 wizard (seed 004: 1518-byte frames through a 10G NIC, initial
// load 10 %, resolution 1 point): search binary must visit the same loads.
func TestTestCenterSequence(t *testing.T) {
	const size = 1518
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.405 * testLink}
	p := testPlan([]Test{TestThroughput}, size)
	p.Throughput.Search = SearchBinary
	p.Throughput.InitialPercent = 10
	p.Throughput.ResolutionPercent = 1
	got, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 55, 32.5, 43.75, 38.125, 40.9375, 39.53125, 40.234375}
	var loads []float64
	for _, tr := range got.Trials {
		loads = append(loads, tr.IntendedPercent)
	}
	if fmt.Sprint(loads) != fmt.Sprint(want) {
		t.Errorf("loads %v, want TestCenter's %v\n%s", loads, want, logTable(got.Trials))
	}
	if !got.Found || got.IntendedPercent != 40.234375 {
		t.Errorf("throughput %.4f%% (found %v), want 40.234375%%", got.IntendedPercent, got.Found)
	}
}
