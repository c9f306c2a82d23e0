package rfc2544

import (
	"context"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// Run 1 of every search below is the path probe; runs 2 and 3 are search
// steps 1 (100%, a failure) and 2 (50%, a pass); run 4 is step 3.

// stallTester runs trials on a SimDUT and spoils the runs stall picks as a
// stalled tester host does: some frames lost, the result marked transiently
// tester-limited.
type stallTester struct {
	sim   *SimDUT
	stall func(run int, s trials.Spec) bool
	runs  int
}

func (st *stallTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := st.sim.Run(ctx, s)
	st.runs++
	if err != nil || !st.stall(st.runs, s) {
		return res, err
	}
	r := &res.Streams[0]
	lost := min(r.Received, 40)
	r.Received -= lost
	r.Lost += lost
	r.MaxLagNs = 6e6
	res.TesterLimited, res.TesterLimitTransient = true, true
	res.TesterLimitReason = "stream 1: generator fell 6.0 ms behind schedule and caught up with a burst"
	return res, nil
}

func TestRetryTransientTesterLimit(t *testing.T) {
	const size = 512
	plain := &Runner{Tester: &SimDUT{LinkBps: testLink, CapacityBps: 0.6 * testLink}, Plan: testPlan(nil, size), Sleep: noSleep}
	want, err := plain.Throughput(context.Background(), size)
	if err != nil || !want.Found {
		t.Fatalf("reference search: %v %+v", err, want)
	}

	tests := []struct {
		name       string
		retries    int
		stall      func(run int, s trials.Spec) bool
		wantFound  bool
		wantLimit  bool
		wantRuns   int // runs the Observer hears of beyond the kept trials
		wantFPS    float64
		wantFPSMax float64
		search     Search // default: the profile's (mlr)
	}{
		{name: "one stall, run again", retries: 0 /* profile: 2 */, stall: func(run int, _ trials.Spec) bool { return run == 4 },
			wantFound: true, wantRuns: 1, wantFPS: want.FPS, wantFPSMax: want.FPS},
		{name: "two stalls in a row, run again twice", retries: 0, stall: func(run int, _ trials.Spec) bool { return run == 4 || run == 5 },
			wantFound: true, wantRuns: 2, wantFPS: want.FPS, wantFPSMax: want.FPS},
		// Every trial from run 4 on stalls: the search goes on below each
		// tester limit (it never ends a search) and reports the highest
		// clean pass as "≥ X", each stalled trial run again twice.
		{name: "stalls outlast the retries: go on below, tester-limited, never a DUT fail", retries: 0, stall: func(run int, _ trials.Spec) bool { return run >= 4 },
			wantFound: true, wantLimit: true, wantRuns: -2, wantFPS: 0, wantFPSMax: want.FPS, search: SearchBinary},
		// One stall, not run again, at the first final trial above the
		// DUT's capacity: the search goes on, and the trials it runs
		// next bound the result from above, so the answer is the DUT's
		// (a stall is never a DUT fail, nor the end of a search).
		{name: "retries off", retries: -1, stall: firstAbove(0.6 * framing.LineRateFPS(testLink, size)),
			wantFound: true, wantLimit: false, wantRuns: 0, wantFPS: want.FPS * 0.995, wantFPSMax: want.FPS * 1.005},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPlan(nil, size)
			p.Trial.Retries = tt.retries
			if tt.search != "" {
				p.Throughput.Search = tt.search
			}
			obs := &recorder{}
			st := &stallTester{sim: &SimDUT{LinkBps: testLink, CapacityBps: 0.6 * testLink}, stall: tt.stall}
			got, err := (&Runner{Tester: st, Plan: p, Sleep: noSleep, Observer: obs}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != tt.wantFound || got.TesterLimited != tt.wantLimit {
				t.Fatalf("found %v tester-limited %v (%s), want %v %v\n%s", got.Found, got.TesterLimited, got.Reason, tt.wantFound, tt.wantLimit, logTable(got.Trials))
			}
			if got.FPS < tt.wantFPS-1e-6 || got.FPS > tt.wantFPSMax+1e-6 {
				t.Errorf("throughput %.1f fps, want %.1f … %.1f", got.FPS, tt.wantFPS, tt.wantFPSMax)
			}
			discarded := 0
			for _, r := range obs.finished {
				if r.Discarded {
					discarded++
					if r.Outcome != OutcomeTesterLimited {
						t.Errorf("a discarded run has outcome %s", r.Outcome)
					}
				}
			}
			wantRuns := tt.wantRuns
			if wantRuns < 0 { // -n: n per tester-limited trial kept
				wantRuns = 0
				for _, r := range got.Trials {
					if r.Outcome == OutcomeTesterLimited {
						wantRuns -= tt.wantRuns
					}
				}
			}
			if discarded != wantRuns || len(obs.finished) != 1+len(got.Trials)+discarded || st.runs != len(obs.finished) {
				t.Errorf("observer heard %d runs (%d discarded), the search kept a probe and %d trials, the tester ran %d; want %d discarded",
					len(obs.finished), discarded, len(got.Trials), st.runs, wantRuns)
			}
			for _, r := range got.Trials {
				if r.Discarded {
					t.Errorf("the search log keeps a discarded run: step %d", r.Step)
				}
				if r.Outcome == OutcomeFail && r.Result.TesterLimitTransient {
					t.Errorf("step %d: a stall of the tester counted as a DUT failure", r.Step)
				}
			}
			if tt.wantRuns > 0 {
				r := got.Trials[2]
				if len(r.RetryReasons) != tt.wantRuns || r.Attempt != tt.wantRuns+1 || !strings.Contains(r.RetryReasons[0], "behind schedule") {
					t.Errorf("step 3: attempt %d, retry reasons %q; want attempt %d with %d reasons", r.Attempt, r.RetryReasons, tt.wantRuns+1, tt.wantRuns)
				}
			}
		})
	}
}

// firstAbove stalls the first trial of full length (2 s, the quick
// profile's final trials) offered above fps.
func firstAbove(fps float64) func(int, trials.Spec) bool {
	done := false
	return func(_ int, s trials.Spec) bool {
		if done || s.Duration < QuickMinFinalDuration.D() || s.RateFPS <= fps {
			return false
		}
		done = true
		return true
	}
}

func TestPlanRetries(t *testing.T) {
	for _, v := range []int{-2, MaxRetries + 1} {
		p := testPlan(nil, 64)
		p.Trial.Retries = v
		err := p.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), "trial.retries") {
			t.Errorf("retries %d: error %v, want one naming trial.retries", v, err)
		}
	}
	for _, v := range []int{-1, 0, 1, MaxRetries} {
		p := testPlan(nil, 64)
		p.Trial.Retries = v
		if err := p.WithDefaults().Validate(); err != nil {
			t.Errorf("retries %d: %v", v, err)
		}
	}
	if d, _ := DefaultPlan(ProfileQuick); d.Trial.Retries != DefaultRetries {
		t.Errorf("quick profile retries %d, want %d", d.Trial.Retries, DefaultRetries)
	}
}

// TestStallDuringOverloadIsTheDUTs: a lossy trial the tester marks
// transiently limited (its host stalled the generator, which caught up with
// a burst) is the DUT's fail, not run again, when the DUT's queue was still
// busy at the end forwarding below the offered rate; a stall at a load the
// DUT sustains (its queue drained faster than the load) stays the tester's
// and is run again.
func TestStallDuringOverloadIsTheDUTs(t *testing.T) {
	for _, tt := range []struct {
		name      string
		forwarded float64
		wantRuns  int
		want      Outcome
	}{
		{"overloaded: forwarded 2 % below the offered rate", 1000, 1, OutcomeFail},
		{"sustained: the burst drained above the offered rate", 1030, 3, OutcomeTesterLimited},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			tester := testerFunc(func(ctx context.Context, s trials.Spec) (trials.Result, error) {
				runs++
				return trials.Result{Spec: s, TesterLimited: true, TesterLimitTransient: true,
					TesterLimitReason: "stream 1: generator fell 12.4 ms behind schedule and caught up with a burst of about 532 frames, enough to explain the 307 lost",
					Streams: []trials.StreamResult{{ID: 1, IntendedFPS: 1020, OfferedFPS: 1020, TxSeconds: 2, Sent: 2040, Received: 2000, Lost: 40,
						Trend: &trials.LatencyTrend{BinNs: 10e6, BusyBins: 40, ForwardedFPS: tt.forwarded}}}}, nil
			})
			p := testPlan([]Test{TestThroughput}, 512)
			rec, err := (&Runner{Tester: tester, Plan: p, Sleep: noSleep}).trial(context.Background(), p.WithDefaults(),
				trialReq{test: TestThroughput, size: 512, step: 1, intendedPercent: 1, spec: trials.Spec{FrameSize: 512, RateFPS: 1020, Duration: 2e9}})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Outcome != tt.want || runs != tt.wantRuns || (rec.Overload != "") != (tt.want == OutcomeFail) {
				t.Errorf("outcome %s after %d runs, overload %q; want %s after %d", rec.Outcome, runs, rec.Overload, tt.want, tt.wantRuns)
			}
		})
	}
}

// testerFunc adapts a function to Tester.
type testerFunc func(context.Context, trials.Spec) (trials.Result, error)

func (f testerFunc) Run(ctx context.Context, s trials.Spec) (trials.Result, error) { return f(ctx, s) }
