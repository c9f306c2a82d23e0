package reports

import (
	"fmt"
	"math"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// This file builds the fixed results files in ../testdata/results from a
// small model of a DUT, so every renderer is tested on a realistic run whose
// numbers are known: a Linux router shaping each direction to shapeBps of L2
// traffic behind a queue of queueBytes, driven bidirectionally at 1 Gbit/s by
// a tester whose own ceiling (calibration) is testerFPS per stream. The model
// is not a simulation of trials (package rfc2544 has one); it only needs to
// produce the shapes every test leaves in a results file: a tester-limited
// size, a size the path cannot carry, search logs, latency histograms.
// Regenerate the files with: go test ./reports -run TestGolden -fixtures

// model is the DUT and tester of a fixture run.
type model struct {
	name       string
	mtu        int     // IP MTU of the path, bytes
	shapeBps   float64 // per direction, L2 bits per second
	queueBytes float64 // DUT queue per direction
	baseNs     float64 // DUT forwarding latency at no load
	testerFPS  float64 // tester ceiling per stream, frames per second
	sizes      []int
	tests      []rfc2544.Test
	start      time.Time
}

var (
	fixture1500 = model{
		name: "1500", mtu: 1500, shapeBps: 600e6, queueBytes: 256000, baseNs: 18000, testerFPS: 650000,
		sizes: []int{64, 128, 256, 512, 1024, 1280, 1518, 1522},
		tests: []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency, rfc2544.TestFrameLoss, rfc2544.TestBackToBack, rfc2544.TestRecovery},
		start: time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC),
	}
	fixture9000 = model{
		name: "9000", mtu: 9000, shapeBps: 620e6, queueBytes: 256000, baseNs: 17500, testerFPS: 650000,
		sizes: []int{64, 128, 256, 512, 1024, 1280, 1518, 1522, 4096, 9018},
		// The second run skips frame loss and recovery, as a user in a
		// hurry would: comparisons must show tests present on one side.
		tests: []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency, rfc2544.TestBackToBack},
		start: time.Date(2026, 11, 28, 16, 30, 0, 0, time.UTC),
	}
)

const linkBps = 1e9

// gen builds one run. Everything is a pure function of the model.
type gen struct {
	m    model
	res  *rfc2544.Results
	now  time.Time
	plan rfc2544.Plan
}

func buildFixture(m model) *rfc2544.Results {
	s := time.Second
	plan := rfc2544.Plan{
		Profile:       "quick",
		Tests:         m.tests,
		FrameSizes:    m.sizes,
		LinkBps:       linkBps,
		Bidirectional: true,
		Flows:         1,
		Trial:         rfc2544.TrialConfig{Duration: rfc2544.Duration(10 * s), Learning: rfc2544.Duration(2 * s), Settle: rfc2544.Duration(2 * s), Rest: rfc2544.Duration(s)},
		Throughput: rfc2544.ThroughputConfig{Search: rfc2544.SearchBinary, InitialPercent: 100, MinPercent: 0.1, MaxPercent: 100,
			ResolutionPercent: 0.5, StepPercent: 10, StartPercent: 10, MaxTrials: 30},
		Latency:    rfc2544.LatencyConfig{Duration: rfc2544.Duration(20 * s), Repetitions: 3},
		FrameLoss:  rfc2544.FrameLossConfig{StepPercent: 10},
		BackToBack: rfc2544.BackToBackConfig{BurstCap: rfc2544.Duration(100 * time.Millisecond), Repetitions: 3},
		Recovery:   rfc2544.RecoveryConfig{Overload: rfc2544.Duration(10 * s), Recovery: rfc2544.Duration(10 * s)},
	}
	paths := trials.Paths{Transport: "raw", TX: "tx_ring", QdiscBypass: true, RX: "rx_ring", Timestamps: "kernel-sw"}
	var cal []rfc2544.CalibrationPoint
	for _, f := range m.sizes {
		cal = append(cal, rfc2544.CalibrationPoint{FrameSize: f, CeilingFPS: 2 * math.Min(m.testerFPS, framing.LineRateFPS(linkBps, f))})
	}
	g := &gen{m: m, now: m.start, plan: plan, res: &rfc2544.Results{
		Schema: rfc2544.SchemaVersion,
		Tool:   "rfc2544 v0.1.0 (fixture)",
		Plan:   plan,
		Tester: rfc2544.TesterInfo{Transport: "raw", Paths: paths, Host: "lab-tester-1", Kernel: "Linux 6.1.0-28-amd64", Calibration: cal},
		DUT: rfc2544.DUTInfo{
			Description: fmt.Sprintf("Synthetic fixture: Linux router, %d-byte MTU path, tbf shaping", m.mtu),
			Settings: map[string]string{
				"mtu":   fmt.Sprint(m.mtu),
				"rate":  fmt.Sprintf("%gmbit", m.shapeBps/1e6),
				"queue": fmt.Sprintf("%gkb", m.queueBytes/1000),
				"os":    "Debian 12 (Linux 6.1), ip_forward=1",
			},
		},
	}}
	g.res.Started = g.now
	for _, test := range m.tests {
		for i, f := range m.sizes {
			switch test {
			case rfc2544.TestThroughput:
				g.res.Throughput = append(g.res.Throughput, g.throughput(f))
			case rfc2544.TestLatency:
				g.res.Latency = append(g.res.Latency, g.latency(g.res.Throughput[i]))
			case rfc2544.TestFrameLoss:
				g.res.FrameLoss = append(g.res.FrameLoss, g.frameLoss(f))
			case rfc2544.TestBackToBack:
				g.res.BackToBack = append(g.res.BackToBack, g.backToBack(g.res.Throughput[i]))
			case rfc2544.TestRecovery:
				g.res.Recovery = append(g.res.Recovery, g.recovery(g.res.Throughput[i]))
			}
		}
	}
	g.res.Finished = g.now
	return g.res
}

func (g *gen) carried(f int) bool { return f-18 <= g.m.mtu }

// capacity is the DUT's forwarding rate per direction at size f, fps.
func (g *gen) capacity(f int) float64 {
	return math.Min(g.m.shapeBps/(float64(f)*8), framing.LineRateFPS(linkBps, f))
}

// queueFrames is how many f-byte frames the DUT queue holds.
func (g *gen) queueFrames(f int) float64 { return math.Floor(g.m.queueBytes / float64(f)) }

// latencyModel gives the latency distribution of a direction at offered rate
// r per direction: an exponential tail over a floor, the floor being the
// forwarding latency plus serialization, the scale growing with load.
func (g *gen) latencyModel(f int, r float64, dir int) (minNs, scaleNs float64) {
	c := g.capacity(f)
	minNs = g.m.baseNs + float64(f*8)/linkBps*1e9 + float64(dir)*700
	rho := math.Min(r/c, 1)
	service := 1e9 / c
	if r > c*1.001 {
		// The queue is full: every frame waits for the whole queue.
		return minNs + g.queueFrames(f)*service*0.9, g.queueFrames(f) * service * 0.05
	}
	// A queue of queueFrames bounds the wait: no tail beyond a fraction of it.
	return minNs, math.Min(800+service*rho/(1-rho), g.queueFrames(f)*service/16)
}

func summary(n uint64, minNs, scaleNs float64, buckets bool) trials.LatencySummary {
	if n == 0 {
		return trials.LatencySummary{}
	}
	q := func(p float64) int64 { return int64(minNs + scaleNs*math.Log(1/(1-p))) }
	s := trials.LatencySummary{
		Count: n, MinNs: int64(minNs), MeanNs: math.Round(minNs + scaleNs), MaxNs: q(1 - 1/float64(n+1)),
		P50Ns: q(0.5), P90Ns: q(0.9), P99Ns: q(0.99), P999Ns: q(0.999),
		PDVP999Ns: q(0.999) - int64(minNs), IPDVMeanAbsNs: math.Round(scaleNs * 0.5), IPDVMaxAbsNs: int64(scaleNs * 6),
		JitterNs: math.Round(scaleNs * 0.5),
	}
	if buckets {
		const nb = 24
		for k := 1; k <= nb; k++ {
			up := minNs + (float64(s.MaxNs)-minNs)*math.Pow(float64(k)/nb, 2)
			cum := uint64(float64(n) * (1 - math.Exp(-(up-minNs)/scaleNs)))
			if k == nb {
				up, cum = float64(s.MaxNs), n
			}
			s.Buckets = append(s.Buckets, trials.LatencyBucket{UpToNs: int64(up), Cumulative: cum})
		}
	}
	return s
}

// trial models one trial of every stream at intendedPercent of line rate for
// dur, or one burst of burst frames per stream at line rate.
func (g *gen) trial(test rfc2544.Test, f, step, rep int, intendedPercent float64, dur time.Duration, burst int64, buckets bool) rfc2544.TrialRecord {
	line := framing.LineRateFPS(linkBps, f)
	intended := line * intendedPercent / 100
	offered := math.Min(intended, g.m.testerFPS)
	if burst > 0 {
		offered = intended
		dur = time.Duration(float64(burst) / intended * float64(time.Second))
	}
	limited := offered < intended*0.999
	spec := trials.Spec{
		FrameSize: f, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}},
		RateFPS: intended, Duration: dur, BurstFrames: burst,
		Learning: time.Duration(g.plan.Trial.Learning), Settle: time.Duration(g.plan.Trial.Settle),
	}
	if burst > 0 {
		spec.Duration = 0
	}
	res := trials.Result{Spec: spec, Start: g.now, Paths: g.res.Tester.Paths}
	if limited {
		res.TesterLimited = true
		res.TesterLimitReason = fmt.Sprintf("generator reached %s of %s fps intended per stream", fps(offered), fps(intended))
	}
	for i, st := range spec.Streams {
		sent := uint64(math.Round(offered * dur.Seconds()))
		if burst > 0 {
			sent = uint64(burst)
		}
		var lost uint64
		switch {
		case !g.carried(f):
			lost = sent
		case burst > 0:
			c := g.capacity(f)
			over := float64(burst)*(1-c/line) - g.queueFrames(f)
			lost = uint64(math.Max(0, math.Ceil(over)))
		case offered > g.capacity(f):
			over := (offered-g.capacity(f))*dur.Seconds() - g.queueFrames(f)
			lost = uint64(math.Max(0, math.Round(over)))
		}
		recv := sent - lost
		minNs, scale := g.latencyModel(f, offered, i)
		sr := trials.StreamResult{
			ID: st.ID, Direction: st.Direction, IntendedFPS: intended, OfferedFPS: offered, TxSeconds: dur.Seconds(),
			Sent: sent, Received: recv, Lost: lost, Latency: summary(recv, minNs, scale, buckets),
			TaggedLatencyNs: -1, LastLossNs: -1,
		}
		if lost > 0 {
			sr.LastLossNs = dur.Nanoseconds() - 1000
		}
		if test == rfc2544.TestLatency && recv > 0 {
			sr.TaggedLatencyNs = int64(minNs + scale*float64(rep%3+1)*0.4)
		}
		res.Streams = append(res.Streams, sr)
	}
	g.now = g.now.Add(time.Duration(g.plan.Trial.Learning) + dur + time.Duration(g.plan.Trial.Settle) + time.Duration(g.plan.Trial.Rest))
	tot := res.Totals()
	rec := rfc2544.TrialRecord{
		Test: test, FrameSize: f, Step: step, Repetition: rep,
		IntendedPercent: intendedPercent, OfferedPercent: offered / line * 100,
		IntendedFPS: tot.IntendedFPS, OfferedFPS: tot.OfferedFPS, BurstFrames: burst,
		Sent: tot.Sent, Received: tot.Received, LossPercent: tot.LossPercent(),
		LatencyMinNs: tot.Latency.MinNs, LatencyAvgNs: tot.Latency.MeanNs, LatencyMaxNs: tot.Latency.MaxNs,
		Result: res,
	}
	switch {
	case limited:
		rec.Outcome, rec.TesterLimitReason = rfc2544.OutcomeTesterLimited, res.TesterLimitReason
	case res.Passed(g.plan.Throughput.LossTolerancePercent):
		rec.Outcome = rfc2544.OutcomePass
	default:
		rec.Outcome = rfc2544.OutcomeFail
	}
	return rec
}

func (g *gen) throughput(f int) rfc2544.ThroughputResult {
	cfg := g.plan.Throughput
	dur := time.Duration(g.plan.Trial.Duration)
	line := framing.LineRateFPS(linkBps, f)
	r := rfc2544.ThroughputResult{FrameSize: f, LineRateFPS: 2 * line}
	lo, hi := 0.0, math.Inf(1)
	var best *rfc2544.TrialRecord
	var bestLimited *rfc2544.TrialRecord
	load := cfg.InitialPercent
	for step := 1; step <= cfg.MaxTrials; step++ {
		tr := g.trial(rfc2544.TestThroughput, f, step, 0, load, dur, 0, false)
		r.Trials = append(r.Trials, tr)
		switch tr.Outcome {
		case rfc2544.OutcomePass:
			lo, best = load, &r.Trials[len(r.Trials)-1]
		case rfc2544.OutcomeTesterLimited:
			hi = load
			if tr.LossPercent == 0 {
				bestLimited = &r.Trials[len(r.Trials)-1]
			}
		default:
			hi = load
		}
		if math.IsInf(hi, 1) || hi-lo <= cfg.ResolutionPercent || load <= cfg.MinPercent {
			break
		}
		load = math.Round((lo+hi)/2*1000) / 1000
		load = math.Max(load, cfg.MinPercent)
	}
	switch {
	case bestLimited != nil && (best == nil || bestLimited.OfferedFPS >= best.OfferedFPS):
		r.Found, r.TesterLimited = true, true
		r.TesterLimitReason = "the tester's ceiling (" + fps(2*g.m.testerFPS) + " fps, calibrated) is below the DUT's forwarding rate"
		best = bestLimited
	case best == nil:
		last := r.Trials[len(r.Trials)-1]
		r.Reason = fmt.Sprintf("no load passed: 100%% loss at every step down to %.3f%%; %d-byte frames exceed the path's %d-byte MTU", last.IntendedPercent, f, g.m.mtu)
		return r
	default:
		r.Found = true
	}
	r.IntendedPercent, r.OfferedPercent, r.FPS = best.IntendedPercent, best.OfferedPercent, best.OfferedFPS
	r.L1Bps, r.L2Bps = framing.L1Bps(r.FPS, f), framing.L2Bps(r.FPS, f)
	return r
}

func (g *gen) latency(t rfc2544.ThroughputResult) rfc2544.LatencyResult {
	r := rfc2544.LatencyResult{FrameSize: t.FrameSize, Definition: "FIFO (first bit in, first bit out), kernel software receive timestamps"}
	if !t.Found {
		r.Skipped = "no throughput found at this size"
		r.Definition = ""
		return r
	}
	r.RateFPS, r.RatePercent = t.FPS, t.OfferedPercent
	dur := time.Duration(g.plan.Latency.Duration)
	var sum float64
	for rep := 1; rep <= g.plan.Latency.Repetitions; rep++ {
		tr := g.trial(rfc2544.TestLatency, t.FrameSize, 1, rep, t.IntendedPercent, dur, 0, true)
		r.Trials = append(r.Trials, tr)
		tag := tr.Result.Streams[0].TaggedLatencyNs
		r.TaggedNs = append(r.TaggedNs, tag)
		sum += float64(tag)
	}
	r.Repetitions = len(r.Trials)
	r.TaggedMeanNs = math.Round(sum / float64(r.Repetitions))
	// All frames of all repetitions: the same model over their sum.
	n := uint64(0)
	for _, tr := range r.Trials {
		n += tr.Result.Streams[0].Received
	}
	minNs, scale := g.latencyModel(t.FrameSize, t.FPS/2, 0)
	r.Summary = summary(n, minNs, scale, true)
	return r
}

func (g *gen) frameLoss(f int) rfc2544.FrameLossResult {
	r := rfc2544.FrameLossResult{FrameSize: f}
	dur := time.Duration(g.plan.Trial.Duration)
	zero := 0
	for step, load := 1, 100.0; load > 0; step, load = step+1, load-g.plan.FrameLoss.StepPercent {
		tr := g.trial(rfc2544.TestFrameLoss, f, step, 0, load, dur, 0, false)
		r.Trials = append(r.Trials, tr)
		r.Points = append(r.Points, rfc2544.FrameLossPoint{
			IntendedPercent: tr.IntendedPercent, OfferedPercent: tr.OfferedPercent, OfferedFPS: tr.OfferedFPS,
			LossPercent: tr.LossPercent, Sent: tr.Sent, Received: tr.Received, TesterLimited: tr.Outcome == rfc2544.OutcomeTesterLimited,
		})
		if tr.LossPercent == 0 && tr.Outcome != rfc2544.OutcomeTesterLimited {
			zero++
		} else {
			zero = 0
		}
		if zero == 2 {
			break
		}
	}
	return r
}

func (g *gen) backToBack(t rfc2544.ThroughputResult) rfc2544.BackToBackResult {
	f := t.FrameSize
	line := framing.LineRateFPS(linkBps, f)
	cfg := g.plan.BackToBack
	r := rfc2544.BackToBackResult{FrameSize: f, RateFPS: 2 * line, CapFrames: int64(time.Duration(cfg.BurstCap).Seconds() * line)}
	// The quick profile's resolution: 1% of the cap.
	r.MinStepFrames = max(1, r.CapFrames/100)
	switch {
	case !t.Found:
		r.Skipped = "no throughput found at this size"
		return r
	case t.TesterLimited:
		r.Skipped = "throughput is tester-limited, so not known to be below the line rate (RFC 9004 §5)"
		return r
	case t.OfferedPercent >= 99.999:
		r.Skipped = "throughput equals the line rate: the DUT needs no buffer (RFC 9004 §5)"
		return r
	}
	step := 1
	var sum, sq float64
	for rep := 1; rep <= cfg.Repetitions; rep++ {
		lo, hi := int64(0), r.CapFrames+1
		burst := r.CapFrames
		for {
			tr := g.trial(rfc2544.TestBackToBack, f, step, rep, 100, 0, burst, false)
			step++
			r.Trials = append(r.Trials, tr)
			if tr.Outcome == rfc2544.OutcomePass {
				lo = burst
			} else {
				hi = burst
			}
			if hi-lo <= r.MinStepFrames {
				break
			}
			// Repetitions differ in where the search starts its halving,
			// as noise would make them differ on a real DUT.
			burst = lo + (hi-lo)/2 + int64(rep-2)*r.MinStepFrames/4
		}
		r.BurstFrames = append(r.BurstFrames, lo)
		sum += float64(lo)
		sq += float64(lo) * float64(lo)
		if r.MinFrames == 0 || lo < r.MinFrames {
			r.MinFrames = lo
		}
		r.MaxFrames = max(r.MaxFrames, lo)
		if lo >= r.CapFrames {
			r.AtCap = true
		}
	}
	n := float64(len(r.BurstFrames))
	r.AvgFrames = sum / n
	r.StddevFrames = math.Sqrt(math.Max(0, (sq-sum*sum/n)/(n-1)))
	r.ThroughputFPS = t.FPS
	r.ImpliedBufferS = r.AvgFrames / line
	r.CorrectedBufferS = r.ImpliedBufferS - r.ImpliedBufferS*(t.FPS/(2*line))
	return r
}

func (g *gen) recovery(t rfc2544.ThroughputResult) rfc2544.RecoveryResult {
	f := t.FrameSize
	r := rfc2544.RecoveryResult{FrameSize: f}
	switch {
	case !t.Found:
		r.Skipped = "no throughput found at this size"
		return r
	case t.TesterLimited:
		r.Skipped = "throughput is tester-limited: 110% of it cannot be offered"
		return r
	}
	line := 2 * framing.LineRateFPS(linkBps, f)
	r.OverloadFPS = math.Min(1.1*t.FPS, line)
	r.RecoveryFPS = r.OverloadFPS / 2
	over := time.Duration(g.plan.Recovery.Overload)
	total := over + time.Duration(g.plan.Recovery.Recovery)
	tr := g.trial(rfc2544.TestRecovery, f, 1, 0, r.OverloadFPS/line*100, total, 0, false)
	// The queue drains at capacity minus the recovery load; the last frame
	// lost is the one that found the queue full just before the change.
	drain := g.queueFrames(f) / (g.capacity(f) - r.RecoveryFPS/2)
	r.RecoveryS = math.Round(drain*0.35*1e6) / 1e6
	r.Recovered = true
	for i := range tr.Result.Streams {
		tr.Result.Streams[i].LastLossNs = over.Nanoseconds() + int64(r.RecoveryS*1e9)
	}
	tr.Result.Spec.RateChange = &trials.RateChange{At: over, RateFPS: r.RecoveryFPS / 2}
	r.Trials = append(r.Trials, tr)
	return r
}
