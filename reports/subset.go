package reports

import (
	"slices"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// HasTable reports whether res holds the results table t is made of.
func HasTable(res *rfc2544.Results, t Table) bool {
	switch t {
	case TableThroughput, TableSearchLog:
		return len(res.Throughput) > 0
	case TableLatency:
		return len(res.Latency) > 0
	case TableFrameLoss:
		return len(res.FrameLoss) > 0
	case TableBackToBack:
		return len(res.BackToBack) > 0
	case TableRecovery:
		return len(res.Recovery) > 0
	case TableProbe:
		return len(res.Probes) > 0
	}
	return false
}

// TablesIn lists the tables res holds, in report order (none: nil).
func TablesIn(res *rfc2544.Results) []Table {
	var out []Table
	for _, t := range Tables {
		if HasTable(res, t) {
			out = append(out, t)
		}
	}
	return out
}

// OnlyTable returns a copy of res holding only the results table t is made
// of (all of res when t is empty); the metadata stays. Slices are shared
// with res.
func OnlyTable(res *rfc2544.Results, t Table) *rfc2544.Results {
	if t == "" {
		return res
	}
	sub := *res
	sub.Throughput, sub.Latency, sub.FrameLoss, sub.BackToBack, sub.Recovery, sub.Probes = nil, nil, nil, nil, nil, nil
	switch t {
	case TableThroughput, TableSearchLog:
		sub.Throughput = res.Throughput
	case TableLatency:
		sub.Latency = res.Latency
	case TableFrameLoss:
		sub.FrameLoss = res.FrameLoss
	case TableBackToBack:
		sub.BackToBack = res.BackToBack
	case TableRecovery:
		sub.Recovery = res.Recovery
	case TableProbe:
		sub.Probes = res.Probes
	}
	return &sub
}

// TableCharts lists the charts of table t that res has data for
// (AvailableCharts), in chart order, as the HTML report shows them:
// throughput for the throughput table and search log, latency,
// latency_cdf and latency_percentile for latency, frame_loss for frame
// loss; none for the other tables. throughput_percent and frame_loss_log
// are asked for by name.
func TableCharts(res *rfc2544.Results, t Table) []ChartKind {
	var want []ChartKind
	switch t {
	case TableThroughput, TableSearchLog:
		want = []ChartKind{ChartThroughput}
	case TableLatency:
		want = []ChartKind{ChartLatency, ChartLatencyCDF, ChartLatencyPercentile}
	case TableFrameLoss:
		want = []ChartKind{ChartFrameLoss}
	}
	avail := AvailableCharts(res)
	var out []ChartKind
	for _, k := range want {
		if slices.Contains(avail, k) {
			out = append(out, k)
		}
	}
	return out
}
