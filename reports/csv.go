package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// WriteCSV writes one table of res as CSV with a header row. Column names are
// the JSON field names, units included (_fps, _bps, _ns, _percent, _s);
// numbers are written in full, without thousands separators or rounding.
// It is an error to ask for a table the results do not hold.
func WriteCSV(w io.Writer, res *rfc2544.Results, which Table) error {
	if _, err := ParseTable(string(which)); err != nil {
		return err
	}
	rows := csvRows(res, which)
	if len(rows) <= 1 {
		return fmt.Errorf("results hold no %s results: the run did not include that test", which)
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("write %s csv: %w", which, err)
	}
	return nil
}

func csvRows(res *rfc2544.Results, which Table) [][]string {
	b := strconv.FormatBool
	i := strconv.Itoa
	var rows [][]string
	add := func(cells ...string) { rows = append(rows, cells) }
	switch which {
	case TableThroughput:
		add("frame_size", "found", "tester_limited", "incomplete", "throughput_fps", "l1_bps", "l2_bps", "intended_percent",
			"offered_percent", "line_rate_fps", "trials", "reason", "tester_limit_reason", "note",
			"ndr_conditional_throughput_fps", "ndr_relevant_lower_bound_percent", "ndr_relevant_upper_bound_percent", "ndr_regular",
			"pdr_loss_percent", "pdr_conditional_throughput_fps", "pdr_relevant_lower_bound_percent", "pdr_relevant_upper_bound_percent", "pdr_regular",
			"not_sustained")
		goal := func(g *rfc2544.GoalResult) []string {
			if g == nil || !g.Found {
				return []string{"", "", "", ""}
			}
			up := ""
			if g.HasUpper {
				up = raw(g.UpperPercent)
			}
			return []string{raw(g.ConditionalFPS), raw(g.LowerPercent), up, b(g.Regular)}
		}
		for _, r := range res.Throughput {
			ndr, pdr := rfc2544.NDRPDR(r.Goals)
			pl := ""
			if pdr != nil {
				pl = raw(pdr.Goal.LossPercent)
			}
			row := []string{framing.SizeName(r.FrameSize), b(r.Found), b(r.TesterLimited), b(r.Incomplete), raw(r.FPS), raw(r.L1Bps), raw(r.L2Bps),
				raw(r.IntendedPercent), raw(r.OfferedPercent), raw(r.LineRateFPS), i(len(r.Trials)), r.Reason,
				r.TesterLimitReason, r.Note}
			row = append(row, goal(ndr)...)
			row = append(row, pl)
			row = append(row, goal(pdr)...)
			add(append(row, r.NotSustained)...)
		}
	case TableSearchLog:
		add("frame_size", "step", "intended_percent", "offered_percent", "intended_fps", "offered_fps", "sent",
			"received", "loss_percent", "reordered", "duplicate", "late", "latency_min_ns", "latency_avg_ns",
			"latency_max_ns", "outcome", "tester_limit_reason", "duration_s", "goal", "fail_reason", "not_sustained", "overload")
		for _, r := range res.Throughput {
			for _, t := range r.Trials {
				d := t.DurationS
				if d == 0 {
					d = t.Result.Spec.Duration.Seconds()
				}
				add(framing.SizeName(t.FrameSize), i(t.Step), raw(t.IntendedPercent), raw(t.OfferedPercent), raw(t.IntendedFPS),
					raw(t.OfferedFPS), u(t.Sent), u(t.Received), raw(t.LossPercent), u(t.Reordered), u(t.Duplicate),
					u(t.Late), i64(t.LatencyMinNs), raw(t.LatencyAvgNs), i64(t.LatencyMaxNs), string(t.Outcome),
					t.TesterLimitReason, raw(d), t.Goal, t.FailReason, t.NotSustained, t.Overload)
			}
		}
	case TableLatency:
		add("frame_size", "skipped", "rate_fps", "rate_percent", "definition", "repetitions", "count", "min_ns",
			"mean_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "pdv_p99_9_ns", "ipdv_mean_abs_ns",
			"ipdv_max_abs_ns", "jitter_ns", "tagged_mean_ns", "lost_tagged", "incomplete", "sizes.frame_size")
		for _, r := range res.Latency {
			s := r.Summary
			add(framing.SizeName(r.FrameSize), r.Skipped, raw(r.RateFPS), raw(r.RatePercent), r.Definition, i(r.Repetitions),
				u(s.Count), i64(s.MinNs), raw(s.MeanNs), i64(s.MaxNs), i64(s.P50Ns), i64(s.P90Ns), i64(s.P99Ns),
				i64(s.P999Ns), i64(s.PDVP999Ns), raw(s.IPDVMeanAbsNs), i64(s.IPDVMaxAbsNs), raw(s.JitterNs),
				raw(r.TaggedMeanNs), i(r.LostTagged), b(r.Incomplete), "")
			// A mix's row is followed by a row per size of the mix
			// (latency[].sizes), the size in sizes.frame_size.
			for _, l := range r.Sizes {
				s := l.Summary
				add(framing.SizeName(r.FrameSize), "", "", "", "", "", u(s.Count), i64(s.MinNs), raw(s.MeanNs), i64(s.MaxNs),
					i64(s.P50Ns), i64(s.P90Ns), i64(s.P99Ns), i64(s.P999Ns), i64(s.PDVP999Ns), raw(s.IPDVMeanAbsNs),
					i64(s.IPDVMaxAbsNs), raw(s.JitterNs), "", "", "", i(l.FrameSize))
			}
		}
	case TableFrameLoss:
		// A mix's point is followed by a row per size of the mix
		// (points[].sizes): its frames sent, received and lost, the size
		// in sizes.frame_size (empty on the point's own row).
		add("frame_size", "intended_percent", "offered_percent", "offered_fps", "sent", "received", "loss_percent",
			"tester_limited", "skipped", "sizes.frame_size")
		for _, r := range res.FrameLoss {
			if r.Skipped != "" {
				add(framing.SizeName(r.FrameSize), "", "", "", "", "", "", "", r.Skipped, "")
			}
			for _, p := range r.Points {
				add(framing.SizeName(r.FrameSize), raw(p.IntendedPercent), raw(p.OfferedPercent), raw(p.OfferedFPS), u(p.Sent),
					u(p.Received), raw(p.LossPercent), b(p.TesterLimited), "", "")
				for _, l := range p.Sizes {
					add(framing.SizeName(r.FrameSize), raw(p.IntendedPercent), raw(p.OfferedPercent), "", u(l.Sent),
						u(l.Received), raw(l.LossPercent), "", "", i(l.FrameSize))
				}
			}
		}
	case TableBackToBack:
		add("frame_size", "skipped", "rate_fps", "avg_frames", "min_frames", "max_frames", "stddev_frames",
			"repetitions", "min_step_frames", "cap_frames", "at_cap", "tester_limited", "incomplete", "throughput_fps",
			"implied_buffer_s", "corrected_buffer_s", "burst_frames")
		for _, r := range res.BackToBack {
			bursts := make([]string, len(r.BurstFrames))
			for k, v := range r.BurstFrames {
				bursts[k] = i64(v)
			}
			add(framing.SizeName(r.FrameSize), r.Skipped, raw(r.RateFPS), raw(r.AvgFrames), i64(r.MinFrames), i64(r.MaxFrames),
				raw(r.StddevFrames), i(len(r.BurstFrames)), i64(r.MinStepFrames), i64(r.CapFrames), b(r.AtCap),
				b(r.TesterLimited), b(r.Incomplete), raw(r.ThroughputFPS), raw(r.ImpliedBufferS), raw(r.CorrectedBufferS), strings.Join(bursts, " "))
		}
	case TableRecovery:
		add("frame_size", "skipped", "overload_fps", "recovery_fps", "recovery_s", "recovered", "incomplete", "note")
		for _, r := range res.Recovery {
			add(framing.SizeName(r.FrameSize), r.Skipped, raw(r.OverloadFPS), raw(r.RecoveryFPS), raw(r.RecoveryS), b(r.Recovered),
				b(r.Incomplete), r.Note)
		}
	case TableProbe:
		add("frame_size", "passed", "offered_fps", "sent", "received", "reason")
		for _, p := range res.Probes {
			add(framing.SizeName(p.FrameSize), b(p.Passed), raw(p.Trial.OfferedFPS), u(p.Trial.Sent), u(p.Trial.Received), p.Reason)
		}
	}
	return rows
}

func u(v uint64) string  { return strconv.FormatUint(v, 10) }
func i64(v int64) string { return strconv.FormatInt(v, 10) }
