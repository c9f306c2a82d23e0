package rfc2544

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/trials"
)

// TestMLRClassify checks the load classification (RFC 9971 Appendix A) on
// hand-computed cases, inconsistent trials included.
func TestMLRClassify(t *testing.T) {
	full := func(n int, loss float64) []mlrTrial {
		var ts []mlrTrial
		for range n {
			ts = append(ts, mlrTrial{dur: 1, loss: loss})
		}
		return ts
	}
	short := func(n int, loss float64) []mlrTrial {
		var ts []mlrTrial
		for range n {
			ts = append(ts, mlrTrial{dur: 0.25, loss: loss})
		}
		return ts
	}
	cat := func(a ...[]mlrTrial) []mlrTrial {
		var out []mlrTrial
		for _, x := range a {
			out = append(out, x...)
		}
		return out
	}
	csit := &mlrTarget{loss: 0.005, exceed: 0.5, dur: 1, sum: 21} // 21 s of 1 s trials
	compat := &mlrTarget{loss: 0, exceed: 0, dur: 1, sum: 1}      // RFC 2544: one full trial, every trial must pass
	tests := []struct {
		name   string
		tg     *mlrTarget
		trials []mlrTrial
		want   class
	}{
		{"nothing measured", csit, nil, undecided},
		{"11 low, 10 high of 21 s: lower", csit, cat(full(11, 0), full(10, 0.01)), lowerBound},
		{"10 low, 11 high of 21 s: upper", csit, cat(full(10, 0), full(11, 0.01)), upperBound},
		{"5 low, 5 high, 11 s missing: undecided", csit, cat(full(5, 0), full(5, 0.01)), undecided},
		{"11 low, nothing else: lower (the rest cannot outweigh)", csit, full(11, 0), lowerBound},
		{"11 high: upper", csit, full(11, 0.01), upperBound},
		{"short low-loss only: undecided", csit, short(40, 0), undecided},
		// exceed 0.5: a short high-loss trial is balanced by a short
		// low-loss one (coefficient 1); 44 unbalanced short high-loss
		// trials are 11 s of high loss.
		{"short high balanced by short low", csit, cat(short(44, 0.01), short(44, 0), full(11, 0)), lowerBound},
		{"short high unbalanced", csit, cat(short(44, 0.01), full(10, 0)), upperBound},
		{"compat: one full pass: lower", compat, full(1, 0), lowerBound},
		{"compat: one full fail: upper", compat, full(1, 1e-6), upperBound},
		{"compat: inconsistent (pass and fail): upper", compat, cat(full(1, 0), full(1, 1e-6)), upperBound},
		{"compat: a short fail is an upper bound", compat, short(1, 1e-6), upperBound},
		{"compat: a short pass decides nothing", compat, short(3, 0), undecided},
		{"a criteria failure is high-loss whatever its loss", compat, []mlrTrial{{dur: 1, failAll: true}}, upperBound},
		{"exceed 0.5 sum 1: inconsistent full trials: lower", &mlrTarget{loss: 0, exceed: 0.5, dur: 1, sum: 1}, cat(full(1, 0), full(1, 0.1)), lowerBound},
		{"exceed 0.5 sum 1: two fails, one pass: upper", &mlrTarget{loss: 0, exceed: 0.5, dur: 1, sum: 1}, cat(full(1, 0), full(2, 0.1)), upperBound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tg.classify(tt.trials); got != tt.want {
				t.Errorf("class %d, want %d", got, tt.want)
			}
		})
	}
}

// TestMLRConditional checks the conditional throughput (RFC 9971
// Appendix B): the exceed-ratio quantile of loss among full-length trials.
func TestMLRConditional(t *testing.T) {
	trs := []mlrTrial{{dur: 1, loss: 0.02, fwdFPS: 98}, {dur: 1, loss: 0, fwdFPS: 100}, {dur: 0.25, loss: 0, fwdFPS: 101}}
	tests := []struct {
		name string
		tg   *mlrTarget
		want float64
	}{
		{"exceed 0.5: the better half", &mlrTarget{exceed: 0.5, dur: 1, sum: 2}, 100},
		{"exceed 0: the worst full trial", &mlrTarget{exceed: 0, dur: 1, sum: 2}, 98},
		{"duration sum not reached: missing trials count as total loss", &mlrTarget{exceed: 0, dur: 1, sum: 3}, 0},
		{"short trials never count", &mlrTarget{exceed: 0.5, dur: 1, sum: 1}, 100},
	}
	for _, tt := range tests {
		if got := tt.tg.conditional(trs); got != tt.want {
			t.Errorf("%s: %g, want %g", tt.name, got, tt.want)
		}
	}
}

// flakyTester loses a few frames in every third timed trial at any load: an
// inconsistent DUT whose loss varies from trial to trial.
type flakyTester struct {
	inner Tester
	n     int
}

func (f *flakyTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := f.inner.Run(ctx, s)
	if err != nil || s.Duration == 0 {
		return res, err
	}
	if f.n++; f.n%3 == 0 {
		st := &res.Streams[0]
		n := min(st.Received, 3)
		st.Received -= n
		st.Lost += n
	}
	return res, err
}

// longLossTester is a DUT whose overload shows only in trials longer than
// after: shorter trials pass up to shortFPS, longer ones only up to the
// inner DUT's capacity.
type longLossTester struct {
	inner    Tester
	after    time.Duration
	shortFPS float64
}

func (l *longLossTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := l.inner.Run(ctx, s)
	if err != nil || s.Duration > l.after || s.RateFPS > l.shortFPS {
		return res, err
	}
	for i := range res.Streams {
		st := &res.Streams[i]
		st.Received, st.Lost = st.Sent, 0
	}
	return res, nil
}

func TestMLRInconsistentDUT(t *testing.T) {
	const size, c = 512, 40.0
	lr := framing.LineRateFPS(testLink, size)
	tests := []struct {
		name   string
		exceed float64
		// want bounds the NDR in % of line rate.
		lo, hi float64
	}{
		// With exceed ratio 0.5 and 5 s of final trials, a load with one
		// lossy trial of three is still a lower bound: the NDR lands near
		// the capacity.
		{"exceed 0.5", 0.5, c * 0.99, c},
		// With exceed ratio 0 every trial must pass: every load gets a
		// lossy trial within its 5 s, so there is no NDR, and the result
		// says so instead of inventing one.
		{"exceed 0", 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
			ft := &flakyTester{inner: sim}
			p := testPlan([]Test{TestThroughput}, size)
			p.Throughput.Goals = []Goal{{Name: "NDR", ExceedRatio: tt.exceed, FinalDuration: Duration(time.Second), DurationSum: Duration(5 * time.Second)}}
			got, err := (&Runner{Tester: ft, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if tt.hi == 0 {
				if got.Found || !strings.Contains(got.Reason, "no load was classified a lower bound") {
					t.Errorf("found %v (%s): want no NDR\n%s", got.Found, got.Reason, logTable(got.Trials))
				}
				return
			}
			if !got.Found || got.IntendedPercent < tt.lo || got.IntendedPercent > tt.hi {
				t.Fatalf("NDR %.3f%% (found %v, %s), want %.3f…%.3f\n%s", got.IntendedPercent, got.Found, got.Reason, tt.lo, tt.hi, logTable(got.Trials))
			}
			if got.FPS > c/100*lr*(1+1e-9) {
				t.Errorf("conditional throughput %.0f fps above the capacity", got.FPS)
			}
			// Inconsistent loads happened: some load has both a pass and a
			// fail among its final trials.
			seen := map[float64][2]bool{}
			for _, r := range got.Trials {
				if r.Goal != "NDR final" {
					continue
				}
				v := seen[r.IntendedPercent]
				v[0] = v[0] || r.Outcome == OutcomePass
				v[1] = v[1] || r.Outcome == OutcomeFail
				seen[r.IntendedPercent] = v
			}
			mixed := false
			for _, v := range seen {
				mixed = mixed || v[0] && v[1]
			}
			if tt.exceed > 0 && !mixed {
				t.Errorf("no load with both passing and failing final trials: the test lost its point\n%s", logTable(got.Trials))
			}
		})
	}
}

// TestMLRLongTrialLoss: short trials pass up to 50% but trials longer than
// 0.5 s only up to 40%: the final trials (the quick profile's 2 s) decide,
// so the NDR is at most 40%, though the search started with short trials.
func TestMLRLongTrialLoss(t *testing.T) {
	const size = 256
	lr := framing.LineRateFPS(testLink, size)
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.4 * testLink}
	lt := &longLossTester{inner: sim, after: 500 * time.Millisecond, shortFPS: 0.5 * lr}
	p := testPlan([]Test{TestThroughput}, size)
	got, err := (&Runner{Tester: lt, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got.Goals {
		// Where 1 − 40/L crosses the goal's loss.
		truth := 40 / (1 - g.Goal.LossPercent/100)
		if !g.Found || !g.Regular || g.LowerPercent > truth*(1+1e-9) || g.LowerPercent < truth*(1-g.Goal.WidthPercent/100)-1e-9 {
			t.Errorf("%s: lower bound %.4f%% (found %v regular %v), want within its width below %.4f%%\n%s", g.Goal.Name, g.LowerPercent, g.Found, g.Regular, truth, logTable(got.Trials))
		}
	}
	short, long := false, false
	for _, r := range got.Trials {
		short = short || r.DurationS <= 0.5 && r.IntendedPercent > 40.5 && r.Outcome == OutcomePass
		long = long || r.DurationS == QuickMinFinalDuration.D().Seconds()
	}
	if !short || !long {
		t.Errorf("want short trials passing above 40%% and final %v trials\n%s", QuickMinFinalDuration, logTable(got.Trials))
	}
}

// TestMLRNotSustained: a zero-loss trial whose queue grew fails for every
// goal unless allow_buffering; the latency test refuses its rate, or says
// it ran there.
func TestMLRNotSustained(t *testing.T) {
	const size, c, q = 128, 60.0, 50.0 // the queue grows above q%
	lr := framing.LineRateFPS(testLink, size)
	old := sustained
	t.Cleanup(func() { sustained = old })
	sustained = func(r trials.Result) (bool, string, float64) {
		if r.Spec.RateFPS > q/100*lr*(1+1e-9) && r.Spec.Duration > 0 {
			return false, "queue growing: +5 ms over 1 s", q / 100 * lr
		}
		return true, "", 0
	}
	for _, allow := range []bool{false, true} {
		for _, search := range []Search{SearchMLR, SearchBinary} {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
			p := testPlan([]Test{TestThroughput, TestLatency}, size)
			p.Throughput.Search = search
			p.Throughput.AllowBuffering = allow
			res, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, lat := res.Throughput[0], res.Latency[0]
			want := q
			if allow {
				want = c
			}
			if got.IntendedPercent > want*(1+1e-9) || got.IntendedPercent < want*0.99 {
				t.Errorf("%s allow=%v: throughput %.3f%%, want just below %g%%\n%s", search, allow, got.IntendedPercent, want, logTable(got.Trials))
			}
			failed := false
			for _, r := range got.Trials {
				if r.FailReason != "" {
					failed = true
					if !strings.Contains(r.FailReason, "queue growing") || r.Outcome != OutcomeFail {
						t.Errorf("fail reason %q outcome %s", r.FailReason, r.Outcome)
					}
				}
			}
			if failed == allow {
				t.Errorf("%s allow=%v: a trial failed for not being sustained: %v", search, allow, failed)
			}
			switch {
			case !allow && (lat.Skipped != "" || lat.RatePercent > q):
				t.Errorf("latency at %.3f%% (skipped %q): want it run at the sustained throughput", lat.RatePercent, lat.Skipped)
			case allow && (got.NotSustained == "" || !strings.Contains(lat.Note, "not sustained")):
				t.Errorf("allow_buffering: throughput note %q, latency note %q: want both to say not sustained", got.NotSustained, lat.Note)
			}
		}
	}
	// A latency test asked to run at an unsustained rate without
	// allow_buffering refuses.
	r := &Runner{Tester: &SimDUT{LinkBps: testLink}, Plan: testPlan(nil, size), Sleep: noSleep}
	lat, err := r.Latency(context.Background(), size, ThroughputResult{FrameSize: size, Found: true, IntendedPercent: 55, NotSustained: "not sustained: queue growing"})
	if err != nil || !strings.Contains(lat.Skipped, "not sustained") || len(lat.Trials) != 0 {
		t.Errorf("latency at an unsustained rate: skipped %q, %d trials, %v", lat.Skipped, len(lat.Trials), err)
	}
}

// TestMaxLatency: with a latency bound, a buffered DUT's throughput is
// where its queue starts, not where its buffer overflows.
func TestMaxLatency(t *testing.T) {
	const size, c = 64, 40.0
	lr := framing.LineRateFPS(testLink, size)
	buf := int64(20000) // 1 s trials pass without loss up to c + 20000 fps
	for _, search := range []Search{SearchMLR, SearchBinary} {
		for _, bound := range []time.Duration{0, 50 * time.Microsecond} {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: buf, BaseLatency: 20 * time.Microsecond}
			p := testPlan([]Test{TestThroughput}, size)
			p.Throughput.Search = search
			p.Throughput.MaxLatency = Duration(bound)
			// The queue grows above c: let such trials pass, so only the
			// latency bound stops the search there.
			p.Throughput.AllowBuffering = true
			p.Throughput.LatencyPercentile = 99.9
			got, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			// What a trial of the final duration passes: buffer over it.
			fin := p.Trial.Duration.D()
			if search == SearchMLR {
				fin = p.Goals()[0].FinalDuration.D()
			}
			hi := c + float64(buf)/fin.Seconds()/lr*100
			if bound > 0 {
				hi = c
			}
			if !got.Found || got.IntendedPercent > hi+1e-9 || got.IntendedPercent < hi*0.99 {
				t.Errorf("%s bound %v: throughput %.3f%%, want just below %.3f%%\n%s", search, bound, got.IntendedPercent, hi, logTable(got.Trials))
			}
		}
	}
}

// kernelDropTester marks every trial above ceilFPS tester-limited with
// kernel drops: loss nobody can be blamed for.
type kernelDropTester struct {
	inner   Tester
	ceilFPS float64
}

func (k kernelDropTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := k.inner.Run(ctx, s)
	if err != nil || s.RateFPS <= k.ceilFPS || s.Duration == 0 {
		return res, err
	}
	st := &res.Streams[0]
	n := min(st.Received, 100)
	st.Received -= n
	st.Lost += n
	st.KernelDrops = n
	res.TesterLimited = true
	res.TesterLimitReason = "receiver dropped frames in the kernel"
	return res, nil
}

// TestTesterLimitNeverEndsASearch: a tester-limited trial with loss nobody
// can be blamed for makes every search mode go on below, and the highest
// clean pass is reported as "≥ X (tester-limited above)".
func TestTesterLimitNeverEndsASearch(t *testing.T) {
	const size, c, ceil = 64, 80.0, 30.0
	lr := framing.LineRateFPS(testLink, size)
	for _, search := range []Search{SearchMLR, SearchBinary, SearchCombo} {
		t.Run(string(search), func(t *testing.T) {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
			p := testPlan([]Test{TestThroughput, TestLatency}, size)
			p.Throughput.Search = search
			res, err := (&Runner{Tester: kernelDropTester{inner: sim, ceilFPS: ceil / 100 * lr}, Plan: p, Sleep: noSleep}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, lat := res.Throughput[0], res.Latency[0]
			if !got.Found || !got.TesterLimited || got.IntendedPercent > ceil*(1+1e-9) || got.IntendedPercent < ceil*0.98 {
				t.Fatalf("found %v tester-limited %v at %.3f%% (%s %s): want ≥ just below %g%%\n%s", got.Found, got.TesterLimited, got.IntendedPercent, got.Reason, got.Note, ceil, logTable(got.Trials))
			}
			if search == SearchMLR && (!got.Goals[0].TesterLimited || !strings.Contains(got.Note, "tester-limited above")) {
				t.Errorf("goal %+v note %q: want ≥ X (tester-limited above)", got.Goals[0], got.Note)
			}
			if lat.Skipped != "" || lat.RatePercent > ceil || !strings.Contains(lat.Note, "tester") {
				t.Errorf("latency at %.3f%% (skipped %q, note %q): want it measured at the highest clean pass", lat.RatePercent, lat.Skipped, lat.Note)
			}
		})
	}
}

// TestSearchProperty draws thousands of DUTs and search settings from a
// logged seed and checks every search mode against the simulator's truth:
// the throughput is never above the capacity with zero-loss goals, and
// within the search's resolution below it.
func TestSearchProperty(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 2544))
	sizes := []int{64, 128, 256, 512, 1024, 1280, 1518, 9000}
	modes := []Search{SearchMLR, SearchBinary, SearchStep, SearchCombo}
	n := 2000
	if testing.Short() {
		n = 200
	}
	for i := range n {
		c := 0.5 + rng.Float64()*99.5 // % of line rate
		size := sizes[rng.IntN(len(sizes))]
		mode := modes[i%len(modes)]
		p := testPlan([]Test{TestThroughput}, size)
		p.NoProbe = true
		p.Throughput.Search = mode
		var width float64 // the resolution, in % of line rate, at the truth
		switch mode {
		case SearchMLR:
			w := []float64{0.1, 0.5, 1, 2}[rng.IntN(4)]
			p.Throughput.Goals = []Goal{{Name: "NDR", WidthPercent: w, ExceedRatio: []float64{0, 0.5}[rng.IntN(2)]}}
			width = c * w / 100
		case SearchBinary, SearchCombo:
			if rng.IntN(2) == 0 {
				p.Throughput.ResolutionPercent = []float64{0.1, 0.5, 1}[rng.IntN(3)]
				width = p.Throughput.ResolutionPercent
			} else {
				p.Throughput.ResolutionRelativePercent = []float64{0.1, 0.5, 1}[rng.IntN(3)]
				width = c * p.Throughput.ResolutionRelativePercent / 100
			}
			p.Throughput.MaxTrials = 60
		case SearchStep:
			p.Throughput.StepPercent = []float64{5, 10}[rng.IntN(2)]
			p.Throughput.StartPercent = p.Throughput.StepPercent
			width = p.Throughput.StepPercent
		}
		sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink}
		got, err := (&Runner{Tester: sim, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
		if err != nil {
			t.Fatal(err)
		}
		truth := c
		// The simulator forwards whole frames: a trial passes up to one
		// frame above the capacity.
		frame := 100 / framing.LineRateFPS(testLink, size) / p.Trial.Duration.D().Seconds()
		if mode == SearchStep && c < p.Throughput.StartPercent {
			// Within a frame and a half below the first step it may pass.
			if got.Found && c < p.Throughput.StartPercent-frame*1.5 {
				t.Errorf("case %d %s C=%.4f%%: found %.4f%% below the first step", i, mode, c, got.IntendedPercent)
			}
			continue
		}
		if !got.Found {
			t.Errorf("case %d %s size %d C=%.4f%%: not found: %s\n%s", i, mode, size, c, got.Reason, logTable(got.Trials))
			continue
		}
		if got.IntendedPercent > truth+frame*1.5 {
			t.Errorf("case %d %s size %d C=%.4f%%: throughput %.4f%% above the capacity\n%s", i, mode, size, c, got.IntendedPercent, logTable(got.Trials))
		}
		if got.IntendedPercent < truth-width*(1+1e-6)-1e-9 {
			t.Errorf("case %d %s size %d C=%.4f%%: throughput %.4f%% more than the resolution %.4f below\n%s", i, mode, size, c, got.IntendedPercent, width, logTable(got.Trials))
		}
		if mode == SearchMLR && math.Abs(got.FPS-got.IntendedPercent/100*framing.LineRateFPS(testLink, size)) > 2 {
			t.Errorf("case %d: conditional throughput %.1f fps is not the zero-loss offered rate at %.4f%%", i, got.FPS, got.IntendedPercent)
		}
	}
}

// heldAndShortTester is the lab's 1024-byte DUT at ~500 Mbit/s as a
// search met it: above capFPS the path holds the tester back (flow
// control: the load offered is capFPS); the first n trials above limFPS the
// generator falls 2.7 % short (tester-limited, nothing lost), and none after.
type heldAndShortTester struct {
	sim            *SimDUT
	capFPS, limFPS float64
	n              int
}

func (h *heldAndShortTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	want, run := s.RateFPS, s
	switch {
	case s.Duration == 0:
		return h.sim.Run(ctx, s)
	case want > h.capFPS:
		run.RateFPS = h.capFPS
	case want > h.limFPS && h.n > 0:
		h.n--
		run.RateFPS = want * 0.973
	default:
		return h.sim.Run(ctx, s)
	}
	res, err := h.sim.Run(ctx, run)
	for i := range res.Streams {
		res.Streams[i].IntendedFPS = want
	}
	res.Spec = s
	if want > h.capFPS {
		res.FlowControlled, res.FlowControlReason = true, trials.FlowControlNote(h.capFPS)
	} else {
		res.TesterLimited, res.TesterLimitReason = true, "stream 1: generator offered 2.69% below the intended load"
	}
	return res, err
}

// TestMLRLiftsAnEarlyTesterLimit: trials just above the capacity meet a
// tester limit that later trials show was not the tester's ceiling. The
// search converges below the limit, looks at it once more, lifts it, and
// ends at the DUT's capacity; a limit never excludes a load the tester
// carried cleanly before it. (On the lab, before: the search looped at one
// load above the lowered maximum until the trial cap and found nothing.)
func TestMLRLiftsAnEarlyTesterLimit(t *testing.T) {
	for _, search := range []Search{SearchMLR, SearchBinary, SearchCombo} {
		t.Run(string(search), func(t *testing.T) { liftsAnEarlyTesterLimit(t, search) })
	}
}

func liftsAnEarlyTesterLimit(t *testing.T, search Search) {
	const size, c = 1024, 50.0
	lr := framing.LineRateFPS(testLink, size)
	for _, buf := range []int64{100, 1000, 1600} {
		for _, capF := range []float64{1.03, 1.066, 1.1} {
			for _, limF := range []float64{1.0, 1.01, 1.02} {
				for n := 1; n <= 3; n++ {
					sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: buf}
					h := &heldAndShortTester{sim: sim, capFPS: capF * c / 100 * lr, limFPS: limF * c / 100 * lr, n: n}
					p := testPlan([]Test{TestThroughput}, size)
					p.Throughput.Search = search
					got, err := (&Runner{Tester: h, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
					if err != nil {
						t.Fatal(err)
					}
					// mlr and binary look at a limit once more before
					// "≥ X"; binary and combo have no trials above the
					// capacity but those, so a tester short three times
					// in a row there leaves "≥ X" (X within 1 % of C).
					limitOK := search != SearchMLR && n == 3
					if !got.Found || got.TesterLimited && !limitOK || got.IntendedPercent > c*1.001 || got.IntendedPercent < c*0.99 {
						t.Errorf("buffer %d, held back above %.3f × C, short above %.2f × C %d times: found %v, tester-limited %v at %.3f%% (%s %s); want the capacity %g%%\n%s",
							buf, capF, limF, n, got.Found, got.TesterLimited, got.IntendedPercent, got.Reason, got.Note, c, logTable(got.Trials))
					}
				}
			}
		}
	}
}

// TestMLRPersistentTesterLimit: a tester that falls 2.7 % short of every
// load above a ceiling (lossless, a persistent limit): the search ends in a
// few trials with "≥ X" just below the lower of the ceiling and the DUT's
// capacity, never looping at one load up to the trial cap (on the lab, a
// 3000-rule firewall at 1518 B: 22 trials at one load before this).
func TestMLRPersistentTesterLimit(t *testing.T) {
	const size, c = 1518, 40.0
	lr := framing.LineRateFPS(testLink, size)
	for _, limF := range []float64{0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.01} {
		sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 1000}
		h := &heldAndShortTester{sim: sim, capFPS: 10 * lr, limFPS: limF * c / 100 * lr, n: 1 << 30}
		p := testPlan([]Test{TestThroughput}, size)
		got, err := (&Runner{Tester: h, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
		if err != nil {
			t.Fatal(err)
		}
		// Below the ceiling by at most the shortfall (2.7 %) and the
		// width of a phase (1 %).
		truth := min(c, limF*c)
		if !got.Found || got.IntendedPercent > truth*(1+1e-9) || got.IntendedPercent < truth*0.963 || len(got.Trials) > 20 ||
			limF < 1 && !got.TesterLimited {
			t.Errorf("ceiling %.2f × C: found %v tester-limited %v at %.3f%% after %d trials (%s %s); want ≥ X within 3.7 %% below %.3f%% in at most 20 trials\n%s",
				limF, got.Found, got.TesterLimited, got.IntendedPercent, len(got.Trials), got.Reason, got.Note, truth, logTable(got.Trials))
		}
	}
}

// bandTester is tester-limited (2.7 % short, as heldAndShortTester) at loads
// in (loFPS, hiFPS] and clean elsewhere.
type bandTester struct {
	sim          *SimDUT
	loFPS, hiFPS float64
	// rng, when set, limits a trial in the band only with probability p.
	rng *rand.Rand
	p   float64
	// transient marks the limits as a stall of the tester's host.
	transient bool
}

func (b *bandTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	if s.Duration == 0 || s.RateFPS <= b.loFPS || s.RateFPS > b.hiFPS || b.rng != nil && b.rng.Float64() >= b.p {
		return b.sim.Run(ctx, s)
	}
	run := s
	run.RateFPS = s.RateFPS * 0.973
	res, err := b.sim.Run(ctx, run)
	for i := range res.Streams {
		res.Streams[i].IntendedFPS = s.RateFPS
	}
	res.Spec = s
	res.TesterLimited, res.TesterLimitReason = true, "stream 1: generator offered 2.69% below the intended load"
	res.TesterLimitTransient = b.transient
	return res, err
}

// TestMLRUpperBoundOutOfReach: the first trial, far above the capacity,
// fails cleanly (an upper bound), then every load from half the capacity to
// just above it meets a persistent tester limit. The search ends below the
// limit; the upper bound it measured first is out of reach, so the result
// is "≥ X, tester-limited above", not a DUT throughput with an irregular
// width. (Found on the lab: a UDP search through a stalling host reported
// 46 % of R as the DUT's, not tester-limited.)
func TestMLRUpperBoundOutOfReach(t *testing.T) {
	const size, c = 1518, 40.0
	lr := framing.LineRateFPS(testLink, size)
	sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 1000}
	b := &bandTester{sim: sim, loFPS: 0.5 * c / 100 * lr, hiFPS: 1.05 * c / 100 * lr}
	p := testPlan([]Test{TestThroughput}, size)
	got, err := (&Runner{Tester: b, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || !got.TesterLimited || got.IntendedPercent > 0.5*c*(1+1e-9) || got.IntendedPercent < 0.5*c*0.963 {
		t.Errorf("found %v tester-limited %v at %.3f%% (%s %s); want ≥ X just below %.3f%%, tester-limited\n%s",
			got.Found, got.TesterLimited, got.IntendedPercent, got.Reason, got.Note, 0.5*c, logTable(got.Trials))
	}
}

// TestMLRTrialCapAmidTesterLimits: whatever the trial cap, a search that
// ends with bounds wider than the goal width because the loads between them
// met tester limits reports "≥ X, tester-limited", never an irregular DUT
// throughput. (On the lab, a UDP search through a stalling host stopped at
// the trial cap with 46 % of R as a lower bound, 96 % as an upper one and
// tester-limited trials between, and reported 46 % as the DUT's.)
func TestMLRTrialCapAmidTesterLimits(t *testing.T) {
	const size, c = 1518, 40.0
	lr := framing.LineRateFPS(testLink, size)
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 0xcab))
	bad, amid := 0, 0
	for i := range 400 {
		sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 1000}
		b := &bandTester{sim: sim, loFPS: 0.5 * c / 100 * lr, hiFPS: 1.05 * c / 100 * lr, rng: rng, p: 0.3 + 0.6*rng.Float64()}
		p := testPlan([]Test{TestThroughput}, size)
		p.Throughput.MaxTrials = 3 + i%18
		got, err := (&Runner{Tester: b, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Found {
			continue
		}
		g := got.Goals[0]
		between := false
		for _, r := range got.Trials {
			between = between || r.Outcome == OutcomeTesterLimited && !r.Discarded &&
				r.IntendedPercent > g.LowerPercent && r.IntendedPercent < g.UpperPercent
		}
		if !g.HasUpper || g.Regular || !between {
			continue
		}
		// Bounds wider than the goal width, tester limits between: the
		// result is the lower bound X, "≥ X, tester-limited".
		amid++
		want := fmt.Sprintf("≥ %.4g%% of line rate (tester-limited between", g.LowerPercent)
		if (!got.TesterLimited || !g.TesterLimited || got.TesterLimitReason == "" || got.IntendedPercent != g.LowerPercent ||
			!strings.HasPrefix(got.Note, want)) && bad < 3 {
			bad++
			t.Errorf("max_trials %d, p %.2f: bounds %.3f…%.3f%% and tester limits between, yet tester-limited %v (goal %v) at %.3f%% (%q, %s); want %q…, tester-limited, at the lower bound\n%s",
				p.Throughput.MaxTrials, b.p, g.LowerPercent, g.UpperPercent, got.TesterLimited, g.TesterLimited, got.IntendedPercent,
				got.TesterLimitReason, got.Note, want, logTable(got.Trials))
		}
	}
	// 6 to 33 of the 400 searches (17.7 on average) end so for each of
	// 2000 seeds measured.
	t.Logf("%d of 400 searches ended with tester limits between bounds wider than the goal width", amid)
	if amid == 0 {
		t.Errorf("no search ended with tester limits between bounds wider than the goal width: nothing was checked")
	}
}

// TestMLRTransientLimitBetweenIsIrregular: limits that are only stalls of
// the tester's host (transient) between the bounds leave a goal irregular,
// not "tester-limited between": the loads were not measured, not beyond
// what the tester carries.
func TestMLRTransientLimitBetweenIsIrregular(t *testing.T) {
	const size, c = 1518, 40.0
	lr := framing.LineRateFPS(testLink, size)
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 0x7a5))
	// 200 searches, and more while none has ended so: 0 to 23 goals of the
	// first 200 do for each of 200 seeds measured (0 for one seed in 200).
	bad, irregular, n := 0, 0, 0
	for ; n < 200 || irregular == 0 && n < 2000; n++ {
		sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 1000}
		b := &bandTester{sim: sim, loFPS: 0.5 * c / 100 * lr, hiFPS: 1.05 * c / 100 * lr, rng: rng, p: 0.3 + 0.6*rng.Float64(), transient: true}
		p := testPlan([]Test{TestThroughput}, size)
		p.Throughput.MaxTrials = 3 + n%18
		got, err := (&Runner{Tester: b, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got.Note, "tester-limited between") {
			t.Fatalf("max_trials %d: transient limits only, yet %q", p.Throughput.MaxTrials, got.Note)
		}
		for _, g := range got.Goals {
			if !g.Found || !g.HasUpper || (g.UpperPercent-g.LowerPercent)/g.UpperPercent <= g.Goal.WidthPercent/100*(1+1e-6) {
				continue
			}
			between := false
			for _, r := range got.Trials {
				between = between || r.Outcome == OutcomeTesterLimited && r.Result.TesterLimitTransient &&
					r.IntendedPercent > g.LowerPercent && r.IntendedPercent < g.UpperPercent
			}
			if !between {
				continue
			}
			// Bounds wider than the goal width, transient limits between.
			irregular++
			if (g.Regular || g.TesterLimited || !strings.Contains(g.Note, "irregular: bounds")) && bad < 3 {
				bad++
				t.Errorf("max_trials %d, p %.2f, goal %s: bounds %.3f…%.3f%% and transient limits between, yet regular %v, tester-limited %v (%q); want irregular\n%s",
					p.Throughput.MaxTrials, b.p, g.Goal.Name, g.LowerPercent, g.UpperPercent, g.Regular, g.TesterLimited, g.Note, logTable(got.Trials))
			}
		}
	}
	t.Logf("%d goals of %d searches ended with transient limits between bounds wider than the goal width", irregular, n)
	if irregular == 0 {
		t.Errorf("no goal ended with transient limits between bounds wider than the goal width: nothing was checked")
	}
}

// lossyBandTester is bandTester whose limited trials also lose 2 % of the
// frames, a lasting limit beside loss its catch-up burst explains
// (trials.Result.LossExplained, when explained).
type lossyBandTester struct {
	bandTester
	explained bool
}

func (b *lossyBandTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := b.bandTester.Run(ctx, s)
	if err != nil || !res.TesterLimited {
		return res, err
	}
	for i := range res.Streams {
		st := &res.Streams[i]
		st.Lost = st.Sent / 50
		st.Received = st.Sent - st.Lost
	}
	res.TesterLimitReason += "; stream 1: generator fell 150.0 ms behind schedule and caught up with a burst of about 1800 frames, enough to explain the loss"
	res.LossExplained = b.explained
	return res, err
}

// TestExplainedLossIsNotTheDUTs: a trial whose generator could not keep up
// (a lasting limit) and whose loss its own catch-up burst explains is a
// tester limit, not the DUT's loss at the load offered: every search goes
// on below it and reports "≥ X, tester-limited", for MLRsearch and binary
// alike. (CI under stress-ng --cpu 1, 2026-12-02: such a trial was an upper
// bound, and a bidirectional search through the agent ended 4 % below the
// shaper's rate as the DUT's throughput.) With the loss not explained, the
// same trials are the DUT's upper bounds.
func TestExplainedLossIsNotTheDUTs(t *testing.T) {
	const size, c = 1518, 40.0
	lr := framing.LineRateFPS(testLink, size)
	for _, search := range []Search{SearchMLR, SearchBinary} {
		for _, explained := range []bool{true, false} {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: c / 100 * testLink, BufferFrames: 1000}
			b := &lossyBandTester{bandTester: bandTester{sim: sim, loFPS: 0.5 * c / 100 * lr, hiFPS: 1.05 * c / 100 * lr}, explained: explained}
			p := testPlan([]Test{TestThroughput}, size)
			p.Throughput.Search = search
			got, err := (&Runner{Tester: b, Plan: p, Sleep: noSleep}).Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Found || got.TesterLimited != explained || got.IntendedPercent > 0.5*c*(1+1e-9) {
				t.Errorf("%s, loss explained %v: found %v tester-limited %v at %.3f%% (%s %s); want a throughput at most %.3f%%, tester-limited %v\n%s",
					search, explained, got.Found, got.TesterLimited, got.IntendedPercent, got.Reason, got.Note, 0.5*c, explained, logTable(got.Trials))
			}
		}
	}
}
