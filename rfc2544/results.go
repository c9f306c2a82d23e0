package rfc2544

import (
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// SchemaVersion is the version of the Results JSON layout. A reader refuses a
// file whose schema is newer than the one it knows. Every field is documented
// in reports/SCHEMA.md; field names carry their units.
const SchemaVersion = 2

// Test names one RFC 2544 procedure.
type Test string

// The procedures of RFC 2544 §26.
const (
	TestThroughput Test = "throughput"      // §26.1
	TestLatency    Test = "latency"         // §26.2
	TestFrameLoss  Test = "frame_loss"      // §26.3
	TestBackToBack Test = "back_to_back"    // §26.4, RFC 9004
	TestRecovery   Test = "system_recovery" // §26.5

	// TestProbe marks the path-probe trial that precedes the first trial of
	// each frame size (see Plan.NoProbe). It is not a test a plan can name.
	TestProbe Test = "probe"
)

// Results is a whole run: what was planned, what ran it, and what every
// procedure found, with every trial kept as its search log.
type Results struct {
	// Schema is SchemaVersion at the time of writing.
	Schema int `json:"schema"`
	// Tool is the program and version that wrote the file.
	Tool string `json:"tool"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Plan is the effective plan, so a run can be reproduced.
	Plan Plan `json:"plan"`
	// Tester says how traffic was made and timed.
	Tester TesterInfo `json:"tester"`
	// DUT describes the device under test as the user or the lab gave it.
	DUT DUTInfo `json:"dut"`

	Throughput []ThroughputResult `json:"throughput,omitempty"`
	Latency    []LatencyResult    `json:"latency,omitempty"`
	FrameLoss  []FrameLossResult  `json:"frame_loss,omitempty"`
	BackToBack []BackToBackResult `json:"back_to_back,omitempty"`
	Recovery   []RecoveryResult   `json:"system_recovery,omitempty"`
	// Probes are the path probes, one per frame size tried.
	Probes []ProbeResult `json:"probes,omitempty"`

	// Error is set when the run stopped early (cancelled or failed); the
	// results above are what finished before it.
	Error string `json:"error,omitempty"`
}

// TesterInfo describes the tester of a run.
type TesterInfo struct {
	// Transport is "raw", "udp", "xdp" or "sim".
	Transport string `json:"transport"`
	// TransportWhy says how the transport was chosen: "--transport raw"
	// when given, else "auto: " and what the choice found (the kernel, the
	// ports, the frame sizes).
	TransportWhy string `json:"transport_why,omitempty"`
	// Paths are the kernel paths the trials used.
	Paths trials.Paths `json:"paths"`
	// Host and Kernel identify the machine that ran the tester.
	Host   string `json:"host,omitempty"`
	Kernel string `json:"kernel,omitempty"`
	// Calibration is the tester's own ceiling per frame size, measured with
	// no DUT; empty when not calibrated.
	Calibration []CalibrationPoint `json:"calibration,omitempty"`
}

// CalibrationPoint is the tester's ceiling at one frame size, as
// trials.Calibrate measured it (one type: a run's results carry the points
// its --calibration file held, whole).
type CalibrationPoint = trials.CalibrationPoint

// DUTInfo describes the device under test (RFC 2544 §7: report its
// configuration and software version).
type DUTInfo struct {
	Description string `json:"description,omitempty"`
	// Settings are free-form key/values, e.g. the lab's rate and MTU.
	Settings map[string]string `json:"settings,omitempty"`
	// Truth is what a lab DUT the tool built does by its settings, per
	// frame size of the plan: the answers, which the reports print beside
	// the results. Empty for a real DUT, or a lab DUT whose answers its
	// settings do not give.
	Truth []TruthPoint `json:"truth,omitempty"`
}

// TruthPoint is a lab DUT's answer at one frame size (lab.Config.TruthAtoB).
type TruthPoint struct {
	FrameSize int `json:"frame_size"`
	// ThroughputFPS is the rate the DUT's shaper forwards, frames/s.
	ThroughputFPS float64 `json:"throughput_fps"`
	// BackToBackFrames is the longest burst at the line rate the model
	// says passes without loss (queue + bucket over 1 − throughput/line);
	// zero when the line is not faster than the shaper.
	BackToBackFrames float64 `json:"back_to_back_frames,omitempty"`
}

// TruthAt is the truth point of frame size f, if there is one.
func (d DUTInfo) TruthAt(f int) (TruthPoint, bool) {
	for _, p := range d.Truth {
		if p.FrameSize == f {
			return p, true
		}
	}
	return TruthPoint{}, false
}

// Outcome classifies one trial for the search.
type Outcome string

// Trial outcomes. A tester-limited trial is neither a pass nor a fail.
const (
	OutcomePass          Outcome = "pass"
	OutcomeFail          Outcome = "fail"
	OutcomeTesterLimited Outcome = "tester-limited"
)

// TrialRecord is one row of a search log, the table commercial testers print
// per step: intended and offered load, frame loss, min/avg/max latency.
type TrialRecord struct {
	Test      Test `json:"test"`
	FrameSize int  `json:"frame_size"`
	// Step numbers the trials of one procedure and frame size from 1.
	Step int `json:"step"`
	// Repetition numbers repeated trials (latency, back-to-back) from 1.
	Repetition      int     `json:"repetition,omitempty"`
	IntendedPercent float64 `json:"intended_percent"`
	OfferedPercent  float64 `json:"offered_percent"`
	IntendedFPS     float64 `json:"intended_fps"`
	OfferedFPS      float64 `json:"offered_fps"`
	// BurstFrames is the burst length of a back-to-back trial.
	BurstFrames  int64   `json:"burst_frames,omitempty"`
	Sent         uint64  `json:"sent"`
	Received     uint64  `json:"received"`
	LossPercent  float64 `json:"loss_percent"`
	Reordered    uint64  `json:"reordered,omitempty"`
	Duplicate    uint64  `json:"duplicate,omitempty"`
	Late         uint64  `json:"late,omitempty"`
	LatencyMinNs int64   `json:"latency_min_ns"`
	LatencyAvgNs float64 `json:"latency_avg_ns"`
	LatencyMaxNs int64   `json:"latency_max_ns"`
	Outcome      Outcome `json:"outcome"`
	// TesterLimitReason explains a tester-limited outcome.
	TesterLimitReason string `json:"tester_limit_reason,omitempty"`
	// Attempt numbers the runs of a repeated trial from 1 (0: run once).
	Attempt int `json:"attempt,omitempty"`
	// Discarded marks a run the tester's host stalled (a transient tester
	// limit): the trial was run again, and only the journal keeps this one.
	Discarded bool `json:"discarded,omitempty"`
	// RetryReasons are the tester limits of the discarded runs before this
	// one, in order.
	RetryReasons []string `json:"retry_reasons,omitempty"`
	// Overload, on a trial the tester marked transiently limited (its
	// host stalled the generator), says why the loss is the DUT's all the
	// same: its queue was still busy at the end of the trial, forwarding
	// below the offered rate. The trial then counts as the DUT's (pass or
	// fail by its loss) and is not run again; TesterLimitReason keeps the
	// stall.
	Overload string `json:"overload,omitempty"`
	// DurationS is the trial's traffic duration in seconds (an mlr search
	// lengthens its trials as the interval narrows).
	DurationS float64 `json:"duration_s,omitempty"`
	// Goal names the mlr goal (and phase) this trial served, e.g. "NDR
	// final" or "PDR 2/3"; empty for other searches.
	Goal string `json:"goal,omitempty"`
	// FailReason says why a trial that lost no more than the tolerance
	// still failed: not sustained, or over throughput.max_latency. Such a
	// trial fails for every goal.
	FailReason string `json:"fail_reason,omitempty"`
	// NotSustained says why the queue grew through a zero-loss trial
	// (trials.Result.Sustained), also when throughput.allow_buffering let
	// it pass.
	NotSustained string `json:"not_sustained,omitempty"`
	// SustainedLossPercent, for a zero-loss trial that was not sustained
	// (without allow_buffering), is the loss a trial long enough to fill
	// the queue would show: 1 − sustained rate / offered rate, in percent.
	// The trial fails every goal (tolerance) below it: a zero-loss goal
	// always.
	SustainedLossPercent float64 `json:"sustained_loss_percent,omitempty"`
	// Result is the full trial result, per stream.
	Result trials.Result `json:"result"`
}

// ThroughputResult is RFC 2544 §26.1 at one frame size.
type ThroughputResult struct {
	FrameSize int `json:"frame_size"`
	// Found is false when even the minimum load failed, or the size could
	// not be carried; Reason then says why and the rates are zero.
	Found  bool   `json:"found"`
	Reason string `json:"reason,omitempty"`
	// IntendedPercent and OfferedPercent are of the line rate.
	IntendedPercent float64 `json:"intended_percent"`
	OfferedPercent  float64 `json:"offered_percent"`
	// FPS is the offered rate of the highest passing trial (all streams).
	FPS   float64 `json:"throughput_fps"`
	L1Bps float64 `json:"l1_bps"`
	L2Bps float64 `json:"l2_bps"`
	// LineRateFPS is the theoretical maximum at this size (all streams).
	LineRateFPS float64 `json:"line_rate_fps"`
	// TesterLimited means the search stopped because the tester could not
	// go faster: the throughput is at least FPS ("≥ X, tester-limited").
	TesterLimited     bool   `json:"tester_limited,omitempty"`
	TesterLimitReason string `json:"tester_limit_reason,omitempty"`
	// FlowControlled says the DUT held the tester back (flow control) in
	// the search: the throughput is the rate it accepted (Note says how).
	FlowControlled bool `json:"flow_controlled,omitempty"`
	// Note says how a found search ended when that matters, e.g. at the
	// trial cap before reaching the resolution.
	Note string `json:"note,omitempty"`
	// Incomplete is set when the run stopped during the search
	// (Results.Error says why): Found is then false and Trials is the log
	// so far.
	Incomplete bool `json:"incomplete,omitempty"`
	// Trials is the search log.
	Trials []TrialRecord `json:"trials"`
	// Goals are an mlr search's results per goal, in the plan's order; the
	// fields above are then the first goal's (its conditional throughput
	// and relevant lower bound).
	Goals []GoalResult `json:"goals,omitempty"`
	// NotSustained, set only with throughput.allow_buffering, says that a
	// trial at the reported load was not sustained (its queue grew): the
	// DUT's buffer, not its forwarding rate, carried the load.
	NotSustained string `json:"not_sustained,omitempty"`
	// Directions, for a bidirectional plan (RFC 2544 §14), gives each
	// direction's own rates in the trial the throughput was taken from: a
	// bidirectional trial passes only when both directions pass, so FPS is
	// set by the slower direction of an asymmetric DUT.
	Directions []DirectionThroughput `json:"directions,omitempty"`
}

// DirectionThroughput is one direction of a bidirectional throughput.
type DirectionThroughput struct {
	Direction trials.Direction `json:"direction"`
	// OfferedFPS and ReceivedFPS are this direction's offered and received
	// rates, in frames per second, in the trial FPS was taken from.
	OfferedFPS  float64 `json:"offered_fps"`
	ReceivedFPS float64 `json:"received_fps"`
	// Alone is this direction's own throughput search, with traffic in
	// this direction only (ThroughputConfig.PerDirection); nil otherwise.
	Alone *ThroughputResult `json:"alone,omitempty"`
}

// LatencyResult is RFC 2544 §26.2 at one frame size.
type LatencyResult struct {
	FrameSize int `json:"frame_size"`
	// Skipped is set with a reason when no throughput was found to test at,
	// or when the trial at the throughput was not sustained.
	Skipped string `json:"skipped,omitempty"`
	// Note qualifies the rate, e.g. measured at a load whose throughput
	// trial was not sustained (allow_buffering), or below a tester limit.
	Note string `json:"note,omitempty"`
	// RateFPS (all streams) and RatePercent (of line rate, per stream) are
	// the load the streams ran at: the throughput rate.
	RateFPS     float64 `json:"rate_fps"`
	RatePercent float64 `json:"rate_percent"`
	// Definition is the latency definition used, e.g. "FIFO (first bit in,
	// first bit out), software timestamps".
	Definition string `json:"definition"`
	// Repetitions is how many trials ran; TaggedNs holds each tagged frame's
	// latency (RFC 2544 mode) and TaggedMeanNs their mean.
	Repetitions  int     `json:"repetitions"`
	TaggedNs     []int64 `json:"tagged_ns"`
	TaggedMeanNs float64 `json:"tagged_mean_ns"`
	// Summary is the all-frame statistics over every repetition.
	// Percentiles come from merging the repetitions' cumulative buckets when
	// they carry them; otherwise, and for PDV, the largest repetition value
	// is reported (an upper bound).
	Summary trials.LatencySummary `json:"summary"`
	// Sizes are, for a frame-size mix, each of its sizes' latency over
	// every stream and repetition (the streams' sizes[].latency merged:
	// count, min, mean and max exact, percentiles the largest of any trial,
	// an upper bound), in the order the sizes first appear in the mix; nil
	// for one frame size, and through an agent (it sends no per-size
	// latency).
	Sizes []SizeLatency `json:"sizes,omitempty"`
	// LostTagged counts repetitions whose tagged frame was lost; they are
	// left out of TaggedMeanNs.
	LostTagged int `json:"lost_tagged,omitempty"`
	// Incomplete is set when the run stopped before every repetition ran.
	Incomplete bool          `json:"incomplete,omitempty"`
	Trials     []TrialRecord `json:"trials"`
}

// FrameLossPoint is one offered load of the frame loss rate curve.
type FrameLossPoint struct {
	IntendedPercent float64 `json:"intended_percent"`
	OfferedPercent  float64 `json:"offered_percent"`
	OfferedFPS      float64 `json:"offered_fps"`
	LossPercent     float64 `json:"loss_percent"`
	Sent            uint64  `json:"sent"`
	Received        uint64  `json:"received"`
	TesterLimited   bool    `json:"tester_limited,omitempty"`
	// Sizes are, for a frame-size mix, each of its sizes' frames sent,
	// received and lost (all streams), so loss is attributed to a size;
	// nil for one frame size.
	Sizes []SizeLoss `json:"sizes,omitempty"`
}

// FrameLossResult is RFC 2544 §26.3 at one frame size.
type FrameLossResult struct {
	FrameSize int `json:"frame_size"`
	// Skipped is set with a reason when the size was not tested (the path
	// probe found it cannot cross the path).
	Skipped string           `json:"skipped,omitempty"`
	Points  []FrameLossPoint `json:"points"`
	// Incomplete is set when the run stopped before the sweep ended.
	Incomplete bool          `json:"incomplete,omitempty"`
	Trials     []TrialRecord `json:"trials"`
}

// BackToBackResult is RFC 2544 §26.4 with RFC 9004 at one frame size.
type BackToBackResult struct {
	FrameSize int `json:"frame_size"`
	// Skipped is set with the RFC 9004 reason when the size was not tested
	// (e.g. its throughput equals the line rate).
	Skipped string `json:"skipped,omitempty"`
	// RateFPS is the burst rate per stream (line rate).
	RateFPS float64 `json:"rate_fps"`
	// BurstFrames is the longest lossless burst of each repetition.
	BurstFrames  []int64 `json:"burst_frames"`
	AvgFrames    float64 `json:"avg_frames"`
	MinFrames    int64   `json:"min_frames"`
	MaxFrames    int64   `json:"max_frames"`
	StddevFrames float64 `json:"stddev_frames"`
	// MinStepFrames and CapFrames are the search's resolution and the burst
	// length cap (burst time cap × RateFPS).
	MinStepFrames int64 `json:"min_step_frames"`
	CapFrames     int64 `json:"cap_frames"`
	// AtCap flags results at the cap: the DUT buffered the longest burst
	// tried, so the true value is unknown (RFC 9004 §6).
	AtCap bool `json:"at_cap,omitempty"`
	// TesterLimited is set when a burst could not be sent at line rate; the
	// repetition stopped there and its value is a lower bound.
	TesterLimited bool `json:"tester_limited,omitempty"`
	// Incomplete is set when the run stopped before every repetition ran.
	Incomplete bool `json:"incomplete,omitempty"`
	// ThroughputFPS is the measured throughput per stream the correction
	// uses.
	ThroughputFPS float64 `json:"throughput_fps"`
	// ImpliedBufferS = AvgFrames / line-rate fps; CorrectedBufferS subtracts
	// what the DUT forwarded meanwhile (RFC 9004 §5).
	ImpliedBufferS   float64       `json:"implied_buffer_s"`
	CorrectedBufferS float64       `json:"corrected_buffer_s"`
	Trials           []TrialRecord `json:"trials"`
}

// RecoveryResult is RFC 2544 §26.5 at one frame size.
type RecoveryResult struct {
	FrameSize int    `json:"frame_size"`
	Skipped   string `json:"skipped,omitempty"`
	// OverloadFPS is min(110% of throughput, line rate) and RecoveryFPS half
	// of it, summed over the streams.
	OverloadFPS float64 `json:"overload_fps"`
	RecoveryFPS float64 `json:"recovery_fps"`
	// RecoveryS is the time from the rate change to the last lost frame;
	// zero with Recovered false means frames were still being lost at the end.
	RecoveryS float64 `json:"recovery_s"`
	Recovered bool    `json:"recovered"`
	// Note explains a result that is not a plain recovery time, e.g. no
	// frame lost during the overload, or a tester-limited overload.
	Note string `json:"note,omitempty"`
	// Incomplete is set when the run stopped during the trial.
	Incomplete bool          `json:"incomplete,omitempty"`
	Trials     []TrialRecord `json:"trials"`
}

// ProbeResult is the path probe of one frame size (see Plan.NoProbe).
type ProbeResult struct {
	FrameSize int `json:"frame_size"`
	// Passed is true when at least one frame of every stream came through.
	Passed bool `json:"passed"`
	// Reason says why a size failed; every test reports it.
	Reason string      `json:"reason,omitempty"`
	Trial  TrialRecord `json:"trial"`
}

// TrialTime is the tester time the run's trials take on a real engine:
// per trial its learning wait, traffic (duration, or burst length at its
// rate), settle wait, and the plan's rest between trials. For a run on
// SimDUT it is what the same run would cost on real ports.
func (r *Results) TrialTime() time.Duration {
	var n int
	var d time.Duration
	add := func(recs []TrialRecord) {
		for _, t := range recs {
			n++
			d += specTime(t.Result.Spec)
		}
	}
	for _, p := range r.Probes {
		add([]TrialRecord{p.Trial})
	}
	for _, x := range r.Throughput {
		add(x.Trials)
	}
	for _, x := range r.Latency {
		add(x.Trials)
	}
	for _, x := range r.FrameLoss {
		add(x.Trials)
	}
	for _, x := range r.BackToBack {
		add(x.Trials)
	}
	for _, x := range r.Recovery {
		add(x.Trials)
	}
	if n > 1 {
		d += time.Duration(n-1) * r.Plan.Trial.Rest.D()
	}
	return d
}

// Trials counts the trials of every procedure, probes included.
func (r *Results) Trials() int {
	n := len(r.Probes)
	for _, x := range r.Throughput {
		n += len(x.Trials)
	}
	for _, x := range r.Latency {
		n += len(x.Trials)
	}
	for _, x := range r.FrameLoss {
		n += len(x.Trials)
	}
	for _, x := range r.BackToBack {
		n += len(x.Trials)
	}
	for _, x := range r.Recovery {
		n += len(x.Trials)
	}
	return n
}

// specTime is the tester time of one trial: learning, traffic, settle.
func specTime(s trials.Spec) time.Duration {
	traffic := s.Duration
	if s.BurstFrames > 0 && s.RateFPS > 0 {
		traffic = time.Duration(float64(s.BurstFrames) / s.RateFPS * float64(time.Second))
	}
	return s.Learning + traffic + s.Settle
}

// TesterLimited reports whether any result of r is tester-limited: the
// tester, not the DUT, set the limit of a throughput, back-to-back or
// frame loss result.
func (r *Results) TesterLimited() bool {
	for _, t := range r.Throughput {
		if t.TesterLimited {
			return true
		}
	}
	for _, b := range r.BackToBack {
		if b.TesterLimited {
			return true
		}
	}
	for _, l := range r.FrameLoss {
		for _, pt := range l.Points {
			if pt.TesterLimited {
				return true
			}
		}
	}
	return false
}
