package reports

import (
	"context"
	"fmt"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// The fixed results files in ../testdata/results are runs of package
// rfc2544's Runner on its SimDUT, so every renderer is tested on what a real
// run writes: a Linux-router-like DUT shaped to a fraction of a 1 Gbit/s
// line, bidirectional, driven by a tester whose ceiling (650,000 fps per
// stream) is below what the DUT forwards at 64 bytes (a tester-limited size),
// through a path whose MTU drops 1522-byte frames (a not-found size).
// Regenerate them, and the golden files rendered from them, with:
// go test ./reports -update (TestFixturesFresh fails while they are stale).

// model is one fixture run.
type model struct {
	name  string
	mtu   int // IP MTU of the path in bytes: the largest frame is mtu+18
	dut   func() *rfc2544.SimDUT
	sizes []int
	tests []rfc2544.Test
	start time.Time
}

const linkBps = 1e9

var (
	fixture1500 = model{
		name: "1500", mtu: 1500,
		dut: func() *rfc2544.SimDUT {
			return &rfc2544.SimDUT{
				LinkBps: linkBps, CapacityBps: 0.62 * linkBps, CapacityFPS: 1.1e6, BufferBytes: 256_000,
				BaseLatency: 18 * time.Microsecond, Jitter: 6 * time.Microsecond, Noise: 0.004, Seed: 1500,
				TesterCeilingFPS: 650_000, MaxFrameSize: 1518, RecoveryDelay: 40 * time.Millisecond,
			}
		},
		sizes: []int{64, 128, 256, 512, 1024, 1280, 1518, 1522},
		tests: []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency, rfc2544.TestFrameLoss, rfc2544.TestBackToBack, rfc2544.TestRecovery},
		start: time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC),
	}
	// The same DUT on a jumbo path, after a firmware update that made it a
	// little faster; the run skips frame loss and recovery, as a user in a
	// hurry would, so comparisons must show tests present on one side only.
	fixture9000 = model{
		name: "9000", mtu: 9000,
		dut: func() *rfc2544.SimDUT {
			return &rfc2544.SimDUT{
				LinkBps: linkBps, CapacityBps: 0.66 * linkBps, CapacityFPS: 1.2e6, BufferBytes: 256_000,
				BaseLatency: 17 * time.Microsecond, Jitter: 6 * time.Microsecond, Noise: 0.004, Seed: 9000,
				TesterCeilingFPS: 650_000, MaxFrameSize: 9018, RecoveryDelay: 40 * time.Millisecond,
			}
		},
		sizes: []int{64, 128, 256, 512, 1024, 1280, 1518, 1522, 4096, 9018},
		tests: []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency, rfc2544.TestBackToBack},
		start: time.Date(2026, 11, 28, 16, 30, 0, 0, time.UTC),
	}
)

// buildFixture runs the model's plan on its SimDUT and fills in what the CLI
// would (tool, tester, DUT), with fixed timestamps so the file is stable.
func buildFixture(m model) (*rfc2544.Results, error) {
	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		return nil, err
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.Bidirectional = m.tests, m.sizes, linkBps, true
	plan.Trial.Duration = rfc2544.Duration(10 * time.Second)
	plan.Trial.Learning = rfc2544.Duration(2 * time.Second)
	plan.Trial.Settle = rfc2544.Duration(2 * time.Second)
	plan.Throughput.ResolutionPercent = 0.5
	plan.Latency = rfc2544.LatencyConfig{Duration: rfc2544.Duration(20 * time.Second), Repetitions: 3}
	plan.Recovery = rfc2544.RecoveryConfig{Overload: rfc2544.Duration(10 * time.Second), Recovery: rfc2544.Duration(10 * time.Second)}
	dut := m.dut()
	runner := &rfc2544.Runner{Tester: dut, Plan: plan, Sleep: func(context.Context, time.Duration) error { return nil }}
	res, err := runner.Run(context.Background())
	if err != nil {
		return nil, fmt.Errorf("fixture %s: %w", m.name, err)
	}
	// Real timestamps, as a run on real ports would have: trial after trial
	// from the model's start.
	now := m.start
	res.Started = now
	stamp := func(recs []rfc2544.TrialRecord) {
		for i := range recs {
			recs[i].Result.Start = now
			now = now.Add(specTime(recs[i].Result.Spec) + plan.Trial.Rest.D())
		}
	}
	for i := range res.Probes {
		recs := []rfc2544.TrialRecord{res.Probes[i].Trial}
		stamp(recs)
		res.Probes[i].Trial = recs[0]
	}
	for i := range res.Throughput {
		stamp(res.Throughput[i].Trials)
	}
	for i := range res.Latency {
		stamp(res.Latency[i].Trials)
	}
	for i := range res.FrameLoss {
		stamp(res.FrameLoss[i].Trials)
	}
	for i := range res.BackToBack {
		stamp(res.BackToBack[i].Trials)
	}
	for i := range res.Recovery {
		stamp(res.Recovery[i].Trials)
	}
	res.Finished = now
	// Every trial's streams carry their own histogram buckets; the files
	// keep them only in the latency summaries (which the CDF chart reads),
	// to stay small in the repository.
	trim := func(recs []rfc2544.TrialRecord) {
		for i := range recs {
			for j := range recs[i].Result.Streams {
				recs[i].Result.Streams[j].Latency.Buckets = nil
			}
		}
	}
	for i := range res.Probes {
		recs := []rfc2544.TrialRecord{res.Probes[i].Trial}
		trim(recs)
		res.Probes[i].Trial = recs[0]
	}
	for i := range res.Throughput {
		trim(res.Throughput[i].Trials)
	}
	for i := range res.Latency {
		trim(res.Latency[i].Trials)
	}
	for i := range res.FrameLoss {
		trim(res.FrameLoss[i].Trials)
	}
	for i := range res.BackToBack {
		trim(res.BackToBack[i].Trials)
	}
	for i := range res.Recovery {
		trim(res.Recovery[i].Trials)
	}
	res.Tool = "rfc2544 v0.1.0"
	paths := trials.Paths{Transport: "raw", TX: "tx_ring", QdiscBypass: true, RX: "rx_ring", Timestamps: "kernel-sw"}
	res.Tester = rfc2544.TesterInfo{Transport: "raw", Paths: paths, Host: "lab-tester-1", Kernel: "Linux 6.1.0-28-amd64"}
	for _, f := range m.sizes {
		ceil := min(dut.TesterCeilingFPS, framing.LineRateFPS(linkBps, f))
		res.Tester.Calibration = append(res.Tester.Calibration, rfc2544.CalibrationPoint{
			FrameSize: f, OfferedFPS: ceil, ReceivedFPS: ceil, CeilingFPS: ceil, Paths: paths,
		})
	}
	res.DUT = rfc2544.DUTInfo{
		Description: fmt.Sprintf("Fixture: simulated Linux router (rfc2544.SimDUT), %d-byte MTU path", m.mtu),
		Settings: map[string]string{
			"mtu":      fmt.Sprint(m.mtu),
			"capacity": fmt.Sprintf("%g%% of line rate, at most %g fps per direction", dut.CapacityBps/linkBps*100, dut.CapacityFPS),
			"buffer":   fmt.Sprintf("%d bytes per direction", dut.BufferBytes),
			"latency":  fmt.Sprintf("%v + up to %v jitter", dut.BaseLatency, dut.Jitter),
		},
	}
	return res, nil
}

// specTime is the tester time of one trial: learning, traffic, settle.
func specTime(s trials.Spec) time.Duration {
	d := s.Duration
	if s.BurstFrames > 0 && s.RateFPS > 0 {
		d = time.Duration(float64(s.BurstFrames) / s.RateFPS * float64(time.Second))
	}
	return s.Learning + d + s.Settle
}
