package rfc2544

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// TestBackToBack: a burst of N frames at line rate R into a DUT forwarding C
// with a buffer of B frames loses max(0, N(1−C/R) − B), so the longest
// lossless burst is B·R/(R−C) and the corrected buffer time is B/R.
func TestB2BBurstAndBuffer(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		capacity float64 // fraction of line rate
		frames   int64   // BufferFrames
		bytes    int64   // BufferBytes
	}{
		{name: "64 bytes half rate 5000 frames", size: 64, capacity: 0.5, frames: 5000},
		{name: "64 bytes quarter rate 5000 frames", size: 64, capacity: 0.25, frames: 5000},
		{name: "512 bytes 80% 2000 frames", size: 512, capacity: 0.8, frames: 2000},
		{name: "1518 bytes 60% 1 MB buffer", size: 1518, capacity: 0.6, bytes: 1 << 20},
		{name: "1024 bytes 30% frames and bytes, bytes smaller", size: 1024, capacity: 0.3, frames: 10000, bytes: 512 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := &SimDUT{LinkBps: testLink, CapacityBps: tt.capacity * testLink, BufferFrames: tt.frames, BufferBytes: tt.bytes}
			p := testPlan(nil, tt.size)
			p.Trial.Duration = Duration(time.Minute) // a short trial's buffer would inflate the throughput
			p.Throughput.ResolutionPercent = 0.1
			p.BackToBack = BackToBackConfig{BurstCap: Duration(2 * time.Second), Repetitions: 5, MinStepFrames: 10, MinStepPercent: 1}
			r := &Runner{Tester: sim, Plan: p}
			tput, err := r.Throughput(context.Background(), tt.size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.BackToBack(context.Background(), tt.size, tput)
			if err != nil {
				t.Fatal(err)
			}
			lr := framing.LineRateFPS(testLink, tt.size)
			b := sim.Buffer(tt.size)
			wantBurst := b / (1 - tt.capacity)
			wantCorrected := b / lr
			if rel := math.Abs(got.AvgFrames-wantBurst) / wantBurst; rel > 0.05 {
				t.Errorf("average burst %.1f frames, want %.1f within 5%% (off %.2f%%)", got.AvgFrames, wantBurst, rel*100)
			}
			if rel := math.Abs(got.CorrectedBufferS-wantCorrected) / wantCorrected; rel > 0.05 {
				t.Errorf("corrected buffer time %.6f s, want %.6f within 5%% (off %.2f%%)", got.CorrectedBufferS, wantCorrected, rel*100)
			}
			if want := got.AvgFrames / lr; math.Abs(got.ImpliedBufferS-want) > 1e-12 {
				t.Errorf("implied buffer time %g, want %g", got.ImpliedBufferS, want)
			}
			if len(got.BurstFrames) != 5 || got.AtCap || got.Skipped != "" {
				t.Errorf("bursts %v at cap %v skipped %q", got.BurstFrames, got.AtCap, got.Skipped)
			}
			if got.MinFrames > int64(wantBurst) || float64(got.MaxFrames) < wantBurst-float64(got.MinStepFrames) {
				t.Errorf("min %d max %d, want within one step (%d) below %.1f", got.MinFrames, got.MaxFrames, got.MinStepFrames, wantBurst)
			}
			if got.StddevFrames != 0 {
				t.Errorf("stddev %g on a noiseless DUT", got.StddevFrames)
			}
			t.Logf("burst %.0f (want %.0f), implied %.6f s, corrected %.6f s (want %.6f), %d trials",
				got.AvgFrames, wantBurst, got.ImpliedBufferS, got.CorrectedBufferS, wantCorrected, len(got.Trials))
		})
	}
}

func TestBackToBackFlagsAndSkips(t *testing.T) {
	const size = 1518
	lr := framing.LineRateFPS(testLink, size)
	p := testPlan(nil, size)
	p.BackToBack = BackToBackConfig{BurstCap: Duration(100 * time.Millisecond), Repetitions: 3, MinStepPercent: 1}
	t.Run("at cap", func(t *testing.T) {
		// 90% capacity, 5000 frames: the lossless burst is 50000 frames,
		// longer than the 0.1 s cap (8127 frames).
		sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.9 * testLink, BufferFrames: 5000}
		tput := ThroughputResult{FrameSize: size, Found: true, IntendedPercent: 90, OfferedPercent: 90, FPS: 0.9 * lr}
		got, err := (&Runner{Tester: sim, Plan: p}).BackToBack(context.Background(), size, tput)
		if err != nil {
			t.Fatal(err)
		}
		if !got.AtCap || got.MaxFrames != got.CapFrames || got.CapFrames != int64(0.1*lr) {
			t.Errorf("at cap %v, max %d, cap %d: want flagged at the cap of %d", got.AtCap, got.MaxFrames, got.CapFrames, int64(0.1*lr))
		}
		if len(got.Trials) != 3 {
			t.Errorf("%d trials, want one per repetition (each passes at the cap)", len(got.Trials))
		}
	})
	tests := []struct {
		name string
		tput ThroughputResult
		want string
	}{
		{name: "line rate", tput: ThroughputResult{FrameSize: size, Found: true, IntendedPercent: 100, OfferedPercent: 100, FPS: lr},
			want: "so back-to-back would measure the tester (RFC 9004 §5)"},
		{name: "no throughput", tput: ThroughputResult{FrameSize: size, Reason: "no throughput found: x"},
			want: "no throughput at 1518 bytes"},
		{name: "tester-limited", tput: ThroughputResult{FrameSize: size, Found: true, IntendedPercent: 100, OfferedPercent: 40, FPS: 0.4 * lr,
			TesterLimited: true, TesterLimitReason: "sim tester ceiling"}, want: "cannot send back-to-back frames at line rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&Runner{Tester: failTester{t}, Plan: p}).BackToBack(context.Background(), size, tt.tput)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.Skipped, tt.want) {
				t.Errorf("skipped %q, want it to contain %q", got.Skipped, tt.want)
			}
		})
	}
}

// TestFrameLoss: the loss at each load R of a DUT forwarding C with no buffer
// is 1 − C/R; the sweep stops after two lossless trials.
func TestFrameLossCurve(t *testing.T) {
	tests := []struct {
		name      string
		capacity  float64 // % of line rate
		step      float64
		fullSweep bool
		loads     []float64
	}{
		{name: "35% in 10% steps", capacity: 35, step: 10, loads: []float64{100, 90, 80, 70, 60, 50, 40, 30, 20}},
		{name: "35% full sweep", capacity: 35, step: 10, fullSweep: true, loads: []float64{100, 90, 80, 70, 60, 50, 40, 30, 20, 10}},
		{name: "72% in 5% steps", capacity: 72, step: 5, loads: []float64{100, 95, 90, 85, 80, 75, 70, 65}},
		{name: "line rate", capacity: 100, step: 10, loads: []float64{100, 90}},
		{name: "0.5% step from 100", capacity: 99, step: 0.5, loads: []float64{100, 99.5, 99, 98.5}},
	}
	for _, tt := range tests {
		for _, size := range []int{64, 1518} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, size), func(t *testing.T) {
				sim := &SimDUT{LinkBps: testLink, CapacityBps: tt.capacity / 100 * testLink}
				p := testPlan(nil, size)
				p.FrameLoss = FrameLossConfig{StepPercent: tt.step, FullSweep: tt.fullSweep}
				got, err := (&Runner{Tester: sim, Plan: p}).FrameLoss(context.Background(), size)
				if err != nil {
					t.Fatal(err)
				}
				var loads []float64
				for _, pt := range got.Points {
					loads = append(loads, pt.IntendedPercent)
					want := max(0, 1-tt.capacity/pt.OfferedPercent) * 100
					// Whole frames: the model loses ceil(fluid loss) frames.
					if tol := 100/float64(pt.Sent) + 1e-9; math.Abs(pt.LossPercent-want) > tol {
						t.Errorf("at %g%% (offered %.4f%%): loss %.5f%%, want 1 − C/offered = %.5f%%", pt.IntendedPercent, pt.OfferedPercent, pt.LossPercent, want)
					}
					if math.Abs(pt.OfferedPercent-pt.IntendedPercent) > 0.01 {
						t.Errorf("offered %.4f%% far from intended %g%%", pt.OfferedPercent, pt.IntendedPercent)
					}
				}
				if diff := cmp.Diff(tt.loads, loads); diff != "" {
					t.Errorf("loads (-want +got):\n%s", diff)
				}
				if len(got.Trials) != len(got.Points) {
					t.Errorf("%d trials for %d points", len(got.Trials), len(got.Points))
				}
			})
		}
	}
}

// TestRecovery: a drop-tail queue recovers at once (the last lost frame is
// the last one sent before the rate drops); a DUT that keeps dropping for
// RecoveryDelay after an overload recovers in RecoveryDelay; a DUT still
// dropping at the end has not recovered.
func TestRecoveryTime(t *testing.T) {
	const size = 256
	lr := framing.LineRateFPS(testLink, size)
	tests := []struct {
		name      string
		sim       *SimDUT
		recovered bool
		lo, hi    float64 // wanted RecoveryS
		note      string
	}{
		{name: "drop-tail with buffer", sim: &SimDUT{CapacityBps: 0.5 * testLink, BufferFrames: 20000}, recovered: true, lo: 0, hi: 1e-3},
		{name: "recovery delay 250ms", sim: &SimDUT{CapacityBps: 0.5 * testLink, BufferFrames: 20000, RecoveryDelay: 250 * time.Millisecond},
			recovered: true, lo: 0.25 - 1e-3, hi: 0.25},
		{name: "still losing at the end", sim: &SimDUT{CapacityBps: 0.5 * testLink, RecoveryDelay: 5 * time.Second},
			recovered: false, note: "still being lost"},
		{name: "throughput at line rate is no overload", sim: &SimDUT{}, recovered: true, note: "no frame was lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim := tt.sim
			sim.LinkBps = testLink
			p := testPlan(nil, size)
			p.Trial.Duration = Duration(time.Minute)
			r := &Runner{Tester: sim, Plan: p}
			tput, err := r.Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Recovery(context.Background(), size, tput)
			if err != nil {
				t.Fatal(err)
			}
			if got.Recovered != tt.recovered || got.RecoveryS < tt.lo || got.RecoveryS > tt.hi+1e-12 {
				t.Errorf("recovered %v in %.6f s (%s), want %v in [%g, %g]", got.Recovered, got.RecoveryS, got.Note, tt.recovered, tt.lo, tt.hi)
			}
			if !strings.Contains(got.Note, tt.note) {
				t.Errorf("note %q, want %q", got.Note, tt.note)
			}
			if want := min(1.1*tputPercent(tput)/100*lr, lr); math.Abs(got.OverloadFPS-want) > 1e-6 || math.Abs(got.RecoveryFPS-want/2) > 1e-6 {
				t.Errorf("overload %g recovery %g fps, want %g and half", got.OverloadFPS, got.RecoveryFPS, want)
			}
			rc := got.Trials[0].Result.Spec.RateChange
			if rc == nil || rc.At != p.Recovery.Overload.D() {
				t.Errorf("rate change %+v, want at %v", rc, p.Recovery.Overload)
			}
		})
	}
}

// TestLatency: with no queueing, every frame takes base + serialization + a
// uniform [0, J) jitter: the percentiles, PDV and IPDV of that distribution
// come back (P50 ≈ base + J/2, PDV P99.9 ≈ 0.999 J, mean |IPDV| ≈ J/3).
func TestLatencyStats(t *testing.T) {
	const size = 64
	base, jit := 50*time.Microsecond, 10*time.Microsecond
	sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.6 * testLink, BaseLatency: base, Jitter: jit, Seed: 3}
	p := testPlan(nil, size)
	p.Latency = LatencyConfig{Duration: Duration(4 * time.Second), Repetitions: 5}
	r := &Runner{Tester: sim, Plan: p}
	tput, err := r.Throughput(context.Background(), size)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Latency(context.Background(), size, tput)
	if err != nil {
		t.Fatal(err)
	}
	b := float64(base) + float64(size*8)/testLink*1e9 // ns
	j := float64(jit)
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.0f ns, want %.0f ± %.0f", name, got, want, tol)
		}
	}
	s := got.Summary
	near("min", float64(s.MinNs), b, 0.02*j)
	near("max", float64(s.MaxNs), b+j, 0.02*j)
	near("mean", s.MeanNs, b+j/2, 0.05*j)
	near("p50", float64(s.P50Ns), b+0.5*j, 0.04*j)
	near("p90", float64(s.P90Ns), b+0.9*j, 0.04*j)
	near("p99", float64(s.P99Ns), b+0.99*j, 0.03*j)
	near("pdv p99.9", float64(s.PDVP999Ns), 0.999*j, 0.03*j)
	near("ipdv mean", s.IPDVMeanAbsNs, j/3, 0.05*j)
	near("jitter", s.JitterNs, j/3, 0.15*j)
	if got.Repetitions != 5 || len(got.TaggedNs) != 5 || len(got.Trials) != 5 {
		t.Fatalf("%d repetitions, %d tagged, %d trials", got.Repetitions, len(got.TaggedNs), len(got.Trials))
	}
	for _, v := range got.TaggedNs {
		if float64(v) < b || float64(v) > b+j {
			t.Errorf("tagged latency %d ns outside [%0.f, %0.f]", v, b, b+j)
		}
	}
	var recv uint64
	for _, tr := range got.Trials {
		recv += tr.Received
		if tr.Result.Spec.TagAfter != 2*time.Second {
			t.Errorf("tag after %v, want half of 4s", tr.Result.Spec.TagAfter)
		}
	}
	if s.Count != recv {
		t.Errorf("count %d, want every received frame %d", s.Count, recv)
	}
	if got.RatePercent != tput.IntendedPercent || !strings.HasPrefix(got.Definition, "FIFO-approx (transmit stamp to receive timestamp)") {
		t.Errorf("rate %g%% definition %q", got.RatePercent, got.Definition)
	}

	t.Run("skipped without throughput", func(t *testing.T) {
		got, err := (&Runner{Tester: failTester{t}, Plan: p}).Latency(context.Background(), size, ThroughputResult{FrameSize: size, Reason: "no throughput found: even the minimum"})
		if err != nil || !strings.Contains(got.Skipped, "even the minimum") {
			t.Errorf("skipped %q, err %v", got.Skipped, err)
		}
	})
	t.Run("queueing at the throughput shows", func(t *testing.T) {
		// A buffer lets a trial pass above capacity when the search
		// allows buffering; the latency at that rate includes the queue
		// built up (without it, the sustained-rate verdict keeps the
		// search below the capacity: TestMLRNotSustained).
		sim := &SimDUT{LinkBps: testLink, CapacityBps: 0.5 * testLink, BufferFrames: 1000, BaseLatency: base}
		p := testPlan(nil, 1518)
		p.Throughput.AllowBuffering = true
		r := &Runner{Tester: sim, Plan: p}
		tput, _ := r.Throughput(context.Background(), 1518)
		got, err := r.Latency(context.Background(), 1518, tput)
		if err != nil {
			t.Fatal(err)
		}
		if got.Summary.MaxNs <= got.Summary.MinNs+int64(time.Millisecond) {
			t.Errorf("latency %d..%d ns: no queueing at %.2f%% through a 50%% DUT", got.Summary.MinNs, got.Summary.MaxNs, tput.IntendedPercent)
		}
	})
}

func TestMergeLatency(t *testing.T) {
	a := trials.LatencySummary{Count: 100, MinNs: 10, MeanNs: 20, MaxNs: 40, P50Ns: 20, P90Ns: 30, P99Ns: 40, P999Ns: 40, PDVP999Ns: 30,
		IPDVMeanAbsNs: 2, IPDVMaxAbsNs: 5, JitterNs: 1,
		Buckets: []trials.LatencyBucket{{UpToNs: 10, Cumulative: 10}, {UpToNs: 20, Cumulative: 60}, {UpToNs: 30, Cumulative: 90}, {UpToNs: 40, Cumulative: 100}}}
	b := trials.LatencySummary{Count: 300, MinNs: 15, MeanNs: 40, MaxNs: 80, P50Ns: 40, P90Ns: 70, P99Ns: 80, P999Ns: 80, PDVP999Ns: 65,
		IPDVMeanAbsNs: 6, IPDVMaxAbsNs: 9, JitterNs: 5,
		Buckets: []trials.LatencyBucket{{UpToNs: 20, Cumulative: 30}, {UpToNs: 40, Cumulative: 150}, {UpToNs: 70, Cumulative: 270}, {UpToNs: 80, Cumulative: 300}}}
	noBuckets := b
	noBuckets.Buckets = nil
	tests := []struct {
		name string
		in   []trials.LatencySummary
		want trials.LatencySummary
	}{
		{name: "empty", in: nil, want: trials.LatencySummary{}},
		{name: "one and an empty one", in: []trials.LatencySummary{{}, a}, want: a},
		{name: "buckets merge", in: []trials.LatencySummary{a, b}, want: trials.LatencySummary{
			Count: 400, MinNs: 10, MeanNs: 35, MaxNs: 80,
			// merged cumulative: 10:10 20:90 30:(90+30)=120 40:250 70:370 80:400
			P50Ns: 40, P90Ns: 70, P99Ns: 80, P999Ns: 80, PDVP999Ns: 70,
			IPDVMeanAbsNs: 5, IPDVMaxAbsNs: 9, JitterNs: 4,
			Buckets: []trials.LatencyBucket{{UpToNs: 10, Cumulative: 10}, {UpToNs: 20, Cumulative: 90}, {UpToNs: 30, Cumulative: 120},
				{UpToNs: 40, Cumulative: 250}, {UpToNs: 70, Cumulative: 370}, {UpToNs: 80, Cumulative: 400}},
		}},
		{name: "without buckets the largest percentile", in: []trials.LatencySummary{a, noBuckets}, want: trials.LatencySummary{
			Count: 400, MinNs: 10, MeanNs: 35, MaxNs: 80,
			P50Ns: 40, P90Ns: 70, P99Ns: 80, P999Ns: 80, PDVP999Ns: 70,
			IPDVMeanAbsNs: 5, IPDVMaxAbsNs: 9, JitterNs: 4,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, MergeLatency(tt.in)); diff != "" {
				t.Errorf("MergeLatency (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHist(t *testing.T) {
	var h simHist
	h.reset()
	for v := range int64(100000) {
		h.record(v)
	}
	l := h.summary(true)
	for _, c := range []struct {
		name      string
		got, want int64
	}{{"p50", l.P50Ns, 50000}, {"p90", l.P90Ns, 90000}, {"p99", l.P99Ns, 99000}, {"p99.9", l.P999Ns, 99900}} {
		if rel := math.Abs(float64(c.got-c.want)) / float64(c.want); rel > 1e-3 {
			t.Errorf("%s = %d, want %d within 3 significant digits", c.name, c.got, c.want)
		}
	}
	if l.MinNs != 0 || l.MaxNs != 99999 || l.Count != 100000 || len(l.Buckets) > 33 || l.Buckets[len(l.Buckets)-1].Cumulative != 100000 || l.HDR == "" {
		t.Errorf("summary %+v", l)
	}
	if l.PDVP999Ns != l.P999Ns-l.MinNs {
		t.Errorf("PDV %d, want P99.9 − min = %d", l.PDVP999Ns, l.P999Ns-l.MinNs)
	}
	h.reset()
	h.record(7)
	if l := h.summary(true); l.Count != 1 || l.P50Ns != 7 {
		t.Errorf("after reset: %+v", l)
	}
	if n := testing.AllocsPerRun(1000, func() { h.record(123456789) }); n != 0 {
		t.Errorf("record allocates %v times", n)
	}
}

// TestMergeLatencyHistograms: repetitions are merged as one histogram, so
// the merged percentiles are those of all values together, PDV P99.9 is
// P99.9 − min (it was the largest PDV of any repetition, which can exceed
// that when the repetitions' minima differ), and the CDF has every bucket.
func TestMergeLatencyHistograms(t *testing.T) {
	var all, a, b simHist
	all.reset()
	a.reset()
	b.reset()
	for v := int64(20000); v < 30000; v += 3 {
		a.record(v)
		all.record(v)
	}
	for v := int64(11000); v < 44000; v += 7 { // a lower minimum and a long tail
		b.record(v)
		all.record(v)
	}
	la, lb, want := a.summary(true), b.summary(true), all.summary(true)
	got := MergeLatency([]trials.LatencySummary{la, lb})
	if got.Count != want.Count || got.MinNs != want.MinNs || got.MaxNs != want.MaxNs {
		t.Errorf("count/min/max %d/%d/%d, want %d/%d/%d", got.Count, got.MinNs, got.MaxNs, want.Count, want.MinNs, want.MaxNs)
	}
	for _, c := range [][3]any{{"p50", got.P50Ns, want.P50Ns}, {"p90", got.P90Ns, want.P90Ns}, {"p99", got.P99Ns, want.P99Ns}, {"p99.9", got.P999Ns, want.P999Ns}} {
		if c[1] != c[2] {
			t.Errorf("merged %s = %d, the histogram of all values says %d", c[0], c[1], c[2])
		}
	}
	if got.PDVP999Ns != got.P999Ns-got.MinNs || got.PDVP999Ns > got.P999Ns-got.MinNs {
		t.Errorf("PDV P99.9 %d, want P99.9 − min = %d", got.PDVP999Ns, got.P999Ns-got.MinNs)
	}
	if len(got.Buckets) <= 33 || got.Buckets[len(got.Buckets)-1].Cumulative != uint64(a.h.TotalCount()+b.h.TotalCount()) {
		t.Errorf("merged CDF has %d buckets ending at %v; want full resolution", len(got.Buckets), got.Buckets[len(got.Buckets)-1])
	}
	for i := 1; i < len(got.Buckets); i++ {
		if got.Buckets[i].UpToNs <= got.Buckets[i-1].UpToNs || got.Buckets[i].Cumulative <= got.Buckets[i-1].Cumulative {
			t.Fatalf("buckets not increasing at %d: %v %v", i, got.Buckets[i-1], got.Buckets[i])
		}
	}
	// Without histograms (an older agent), PDV is still P99.9 − min.
	la.HDR, lb.HDR = "", ""
	if got := MergeLatency([]trials.LatencySummary{la, lb}); got.PDVP999Ns != got.P999Ns-got.MinNs {
		t.Errorf("bucket merge: PDV %d, want %d", got.PDVP999Ns, got.P999Ns-got.MinNs)
	}
	// A histogram that does not decode is not trusted.
	la.HDR = "HISTFAAAAB" + strings.Repeat("A", 20)
	if got := MergeLatency([]trials.LatencySummary{la, lb}); got.HDR != "" || got.PDVP999Ns != got.P999Ns-got.MinNs {
		t.Errorf("bad histogram merged: %+v", got)
	}
}
