package rfc2544

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var allTests = []Test{TestThroughput, TestLatency, TestFrameLoss, TestBackToBack, TestRecovery}

// suiteDUT is a DUT for whole-suite runs: 62% of line rate, a 2000-frame
// buffer, latency with jitter, a little noise.
func suiteDUT() *SimDUT {
	return &SimDUT{LinkBps: testLink, CapacityBps: 0.62 * testLink, BufferFrames: 2000,
		BaseLatency: 30 * time.Microsecond, Jitter: 3 * time.Microsecond, Noise: 0.002, Seed: 7}
}

// TestRunFullSuite runs all five tests over the 7 RFC sizes with the rfc2544
// profile (50 back-to-back repetitions, 20 latency repetitions) on SimDUT,
// bidirectional, and checks the shape of the results and that it is fast.
func TestRunFullSuite(t *testing.T) {
	p, _ := DefaultPlan(ProfileRFC2544)
	p.LinkBps = testLink
	p.Tests = allTests
	p.Bidirectional = true
	rec := &recorder{}
	r := &Runner{Tester: suiteDUT(), Plan: p, Observer: rec, Sleep: noSleep}
	start := time.Now()
	res, err := r.Run(context.Background())
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("full suite, 5 tests × 7 sizes, %d trials: %v of wall time for %v of trial time", res.Trials(), elapsed, res.TrialTime())
	// Measured on the 2-CPU box: 0.11–0.13 s (7.1 s under -race): 5 s is
	// 40× that, still far below the trial time it would take if trials slept.
	if limit := 5 * time.Second * raceSlowdown; elapsed > limit {
		t.Errorf("full suite took %v, want under %v", elapsed, limit)
	}
	n := len(DefaultFrameSizes)
	if len(res.Throughput) != n || len(res.Latency) != n || len(res.FrameLoss) != n || len(res.BackToBack) != n || len(res.Recovery) != n || len(res.Probes) != n {
		t.Fatalf("results per test: %d %d %d %d %d probes %d, want %d each",
			len(res.Throughput), len(res.Latency), len(res.FrameLoss), len(res.BackToBack), len(res.Recovery), len(res.Probes), n)
	}
	if res.Schema != SchemaVersion || res.Error != "" || res.Tester.Transport != "sim" || res.Plan.Profile != ProfileRFC2544 || res.Plan.Trial.Rest.D() != 5*time.Second {
		t.Errorf("schema %d error %q transport %q plan %+v", res.Schema, res.Error, res.Tester.Transport, res.Plan.Trial)
	}
	if rec.started != res.Trials() || len(rec.finished) != res.Trials() {
		t.Errorf("observer heard %d started, %d finished, of %d trials", rec.started, len(rec.finished), res.Trials())
	}
	for i, x := range res.Throughput {
		if x.FrameSize != DefaultFrameSizes[i] || !x.Found || x.IntendedPercent > 62+0.5 || x.IntendedPercent < 62*(1-0.002)-0.5 {
			t.Errorf("throughput %d: %+v", x.FrameSize, x.IntendedPercent)
		}
		if b := res.BackToBack[i]; len(b.BurstFrames) != 50 || b.Skipped != "" {
			t.Errorf("back-to-back %d: %d repetitions, skipped %q", b.FrameSize, len(b.BurstFrames), b.Skipped)
		}
		if l := res.Latency[i]; l.Repetitions != 20 || l.Summary.Count == 0 {
			t.Errorf("latency %d: %d repetitions, %d frames", l.FrameSize, l.Repetitions, l.Summary.Count)
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("results do not marshal: %v", err)
	}
}

// TestQuickProfileTime measures what the quick profile costs on real ports:
// the trial time (learning + traffic + settle + rest of every trial) of the
// four default tests over the 7 default sizes, on DUTs of 10% to 100% of
// line rate. The profile is tuned to take 2 to 3 minutes.
func TestQuickProfileTime(t *testing.T) {
	for _, c := range []float64{0.1, 0.3, 0.5, 0.8, 0.95} {
		sim := &SimDUT{LinkBps: testLink, CapacityBps: c * testLink, BufferFrames: 256, Seed: 1}
		p := testPlan(nil)
		res, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		d := res.TrialTime()
		t.Logf("quick profile, DUT at %3.0f%%: %d trials, %v", c*100, res.Trials(), d.Round(time.Second))
		if d < 90*time.Second || d > 216*time.Second {
			t.Errorf("DUT at %.0f%%: the quick profile takes %v, want 1.5 to 3.6 minutes", c*100, d)
		}
	}
}

func TestRunDeterministic(t *testing.T) {
	run := func() *Results {
		res, err := (&Runner{Tester: suiteDUT(), Plan: testPlan(allTests, 64, 1518), Sleep: noSleep}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := run(), run()
	if diff := cmp.Diff(a, b, cmpopts.IgnoreFields(Results{}, "Started", "Finished")); diff != "" {
		t.Errorf("two runs with the same seed differ (-a +b):\n%s", diff)
	}
}

// TestRunThroughputWhenNeeded: latency needs the throughput; it runs but is
// not recorded when the plan does not ask for it.
func TestRunThroughputWhenNeeded(t *testing.T) {
	res, err := (&Runner{Tester: suiteDUT(), Plan: testPlan([]Test{TestLatency, TestRecovery}, 128), Sleep: noSleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Throughput) != 0 || len(res.Latency) != 1 || len(res.Recovery) != 1 {
		t.Fatalf("throughput %d latency %d recovery %d", len(res.Throughput), len(res.Latency), len(res.Recovery))
	}
	// 62% capacity and a 2,000-frame buffer: 1 s trials pass up to
	// 62% + 2000 fps = 62.24% of the 128-byte line rate.
	if l := res.Latency[0]; l.Skipped != "" || l.RatePercent < 61 || l.RatePercent > 62.24 {
		t.Errorf("latency at %.2f%% (skipped %q), want at the throughput", l.RatePercent, l.Skipped)
	}
	if len(res.Probes) != 1 {
		t.Errorf("%d probes for one size", len(res.Probes))
	}
}

// TestRunCancel: cancelling during the run returns what finished, the
// interrupted procedure marked incomplete, and the context's error.
func TestRunCancel(t *testing.T) {
	// Where each test's trials start depends on the searches: find the
	// third trial of frame loss and of back-to-back in a full run.
	full := &recorder{}
	if _, err := (&Runner{Tester: suiteDUT(), Plan: testPlan(nil, 64, 1518), Observer: full, Sleep: noSleep}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	third := func(test Test) int {
		n := 0
		for i, x := range full.tests {
			if x == test {
				if n++; n == 3 {
					return i + 1
				}
			}
		}
		t.Fatalf("fewer than 3 %s trials", test)
		return 0
	}
	tests := []struct {
		name     string
		cancelAt int  // trial number at whose start the context is cancelled
		in       Test // the test that trial belongs to
		check    func(t *testing.T, res *Results)
	}{
		{name: "during the first throughput search", cancelAt: 5, in: TestThroughput, check: func(t *testing.T, res *Results) {
			if len(res.Throughput) != 1 || !res.Throughput[0].Incomplete || res.Throughput[0].Found || len(res.Throughput[0].Trials) != 3 {
				t.Errorf("throughput %+v: want one incomplete search with 3 trials (after the probe)", res.Throughput)
			}
		}},
		{name: "during frame loss", cancelAt: third(TestFrameLoss), in: TestFrameLoss},
		{name: "during back-to-back", cancelAt: third(TestBackToBack), in: TestBackToBack},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := &recorder{onStart: func(n int) {
				if n == tt.cancelAt {
					cancel()
				}
			}}
			r := &Runner{Tester: suiteDUT(), Plan: testPlan(nil, 64, 1518), Observer: rec, Sleep: noSleep}
			res, err := r.Run(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if res == nil || !strings.Contains(res.Error, "context canceled") || res.Finished.IsZero() {
				t.Fatalf("results %+v: want partial results with the error", res)
			}
			if got := res.Trials(); got != tt.cancelAt-1 || len(rec.finished) != got {
				t.Errorf("%d trials kept, %d finished: want the %d before the cancel", got, len(rec.finished), tt.cancelAt-1)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
			// The procedure the cancel hit is kept, marked incomplete.
			test := rec.tests[tt.cancelAt-1]
			if test != tt.in {
				t.Fatalf("trial %d belongs to %s, want %s: adjust cancelAt", tt.cancelAt, test, tt.in)
			}
			if !lastIncomplete(res, test) {
				t.Errorf("cancelled in %s, whose last result is not marked incomplete", test)
			}
		})
	}
	t.Run("during the rest between trials", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := testPlan(nil, 64)
		p.Trial.Rest = Duration(time.Hour) // the real sleep must give way to ctx
		first := make(chan struct{})
		rec := &recorder{onStart: func(n int) {
			switch n {
			case 1:
				close(first)
			default:
				t.Error("a trial started after the rest")
			}
		}}
		go func() {
			<-first
			cancel()
		}()
		done := make(chan error, 1)
		go func() {
			_, err := (&Runner{Tester: suiteDUT(), Plan: p, Observer: rec}).Run(ctx)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel during the rest")
		}
	})
}

func BenchmarkRunSuite(b *testing.B) {
	p, _ := DefaultPlan(ProfileRFC2544)
	p.LinkBps = testLink
	p.Tests = allTests
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&Runner{Tester: suiteDUT(), Plan: p, Sleep: noSleep}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// lastIncomplete reports whether the last result of test is marked
// Incomplete.
func lastIncomplete(res *Results, test Test) bool {
	switch test {
	case TestThroughput:
		return len(res.Throughput) > 0 && res.Throughput[len(res.Throughput)-1].Incomplete
	case TestLatency:
		return len(res.Latency) > 0 && res.Latency[len(res.Latency)-1].Incomplete
	case TestFrameLoss:
		return len(res.FrameLoss) > 0 && res.FrameLoss[len(res.FrameLoss)-1].Incomplete
	case TestBackToBack:
		return len(res.BackToBack) > 0 && res.BackToBack[len(res.BackToBack)-1].Incomplete
	case TestRecovery:
		return len(res.Recovery) > 0 && res.Recovery[len(res.Recovery)-1].Incomplete
	}
	return false
}
