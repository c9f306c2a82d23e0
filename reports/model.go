package reports

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// Table names one table of a results file: the results of one test, or the
// throughput search log. Text, CSV and HTML reports use the same names.
type Table string

// The tables of a results file, in report order.
const (
	TableThroughput Table = "throughput"      // RFC 2544 §26.1, one row per frame size
	TableSearchLog  Table = "search_log"      // every throughput trial, as testers print it
	TableLatency    Table = "latency"         // RFC 2544 §26.2
	TableFrameLoss  Table = "frame_loss"      // RFC 2544 §26.3, offered load vs loss
	TableBackToBack Table = "back_to_back"    // RFC 2544 §26.4, RFC 9004
	TableRecovery   Table = "system_recovery" // RFC 2544 §26.5
	TableProbe      Table = "probe"           // the path probe of each frame size (rfc2544.Plan.NoProbe)
)

// Tables lists every table in report order.
var Tables = []Table{TableThroughput, TableSearchLog, TableLatency, TableFrameLoss, TableBackToBack, TableRecovery, TableProbe}

// ParseTable reads a table name as users type it: the names of Tables, with
// '-' accepted for '_', plus "recovery" and "b2b".
func ParseTable(s string) (Table, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	switch n {
	case "recovery":
		return TableRecovery, nil
	case "b2b":
		return TableBackToBack, nil
	case "searchlog", "search":
		return TableSearchLog, nil
	case "probes":
		return TableProbe, nil
	}
	for _, t := range Tables {
		if string(t) == n {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown test %q: want one of %s", s, joinNames(Tables))
}

func joinNames[T ~string](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// table is one rendered table, independent of the output format: the text
// and HTML reports draw the same cells.
type table struct {
	Name   Table
	Title  string
	Header []string
	// Right marks the columns whose cells align right (numbers).
	Right []bool
	// Optional marks the columns a text table within Width columns may
	// leave out (the wide layout and HTML keep them), first to last.
	Optional []bool
	Rows     [][]string
	// Notes are printed under the table.
	Notes []string
}

func newTable(name Table, title string, cols ...string) *table {
	t := &table{Name: name, Title: title, Right: make([]bool, len(cols)), Optional: make([]bool, len(cols))}
	for i, c := range cols {
		// A leading '~' marks a column the narrow text may leave out.
		if r, ok := strings.CutPrefix(c, "~"); ok {
			c, t.Optional[i] = r, true
		}
		// A leading '>' marks a numeric column.
		if r, ok := strings.CutPrefix(c, ">"); ok {
			c, t.Right[i] = r, true
		}
		t.Header = append(t.Header, c)
	}
	return t
}

func (t *table) add(cells ...string) { t.Rows = append(t.Rows, cells) }

// buildTables returns the tables of res named by which, or every table when
// which is empty. Tests with no results give no table.
func buildTables(res *rfc2544.Results, which Table) []*table {
	var out []*table
	want := func(t Table) bool { return which == "" || which == t }
	if want(TableThroughput) && len(res.Throughput) > 0 {
		out = append(out, throughputTable(res))
	}
	if want(TableSearchLog) && len(res.Throughput) > 0 {
		out = append(out, searchLogTables(res)...)
	}
	if want(TableLatency) && len(res.Latency) > 0 {
		out = append(out, latencyTable(res))
	}
	if want(TableFrameLoss) && len(res.FrameLoss) > 0 {
		out = append(out, frameLossTable(res))
	}
	if want(TableBackToBack) && len(res.BackToBack) > 0 {
		out = append(out, backToBackTable(res))
	}
	if want(TableRecovery) && len(res.Recovery) > 0 {
		out = append(out, recoveryTable(res))
	}
	if want(TableProbe) && len(res.Probes) > 0 {
		out = append(out, probeTable(res))
	}
	return out
}

func throughputTable(res *rfc2544.Results) *table {
	goals := hasGoals(res)
	cols := []string{">Frame size (B)", ">Throughput (fps)", ">Mbit/s L1", "~>Mbit/s L2", ">% of line rate", "~>Line rate (fps)", ">Trials", "Note"}
	if goals {
		cols = slices.Insert(cols, 5, ">NDR (fps)", ">PDR (fps)")
	}
	truth := len(res.DUT.Truth) > 0
	if truth {
		cols = slices.Insert(cols, len(cols)-1, ">Lab truth (fps)", ">Found / truth")
	}
	t := newTable(TableThroughput, "Throughput (RFC 2544 §26.1)", cols...)
	limited, irregular := false, false
	for _, r := range res.Throughput {
		size, line, n := framing.SizeName(r.FrameSize), fps(r.LineRateFPS), strconv.Itoa(len(r.Trials))
		var row []string
		switch {
		case r.Incomplete:
			row = []string{size, "incomplete", dash, dash, dash, line, n, joinNotes("the run stopped during the search", r.Reason, r.Note)}
		case !r.Found:
			row = []string{size, "not found", dash, dash, dash, line, n, joinNotes(r.Reason, r.Note)}
		case r.TesterLimited:
			limited = true
			row = []string{size, "≥ " + fps(r.FPS), "≥ " + mbps(r.L1Bps), "≥ " + mbps(r.L2Bps),
				"≥ " + pct(r.OfferedPercent), line, n, joinNotes("tester-limited: "+r.TesterLimitReason, r.Note)}
		default:
			row = []string{size, fps(r.FPS), mbps(r.L1Bps), mbps(r.L2Bps), pct(r.OfferedPercent), line, n, r.Note}
		}
		if r.NotSustained != "" {
			row[len(row)-1] = joinNotes(row[len(row)-1], "accepted with --allow-buffering: "+r.NotSustained)
		}
		if goals {
			ndr, pdr := rfc2544.NDRPDR(r.Goals)
			nc, ni := goalCell(ndr)
			pc, pi := goalCell(pdr)
			irregular = irregular || ni || pi
			row = slices.Insert(row, 5, nc, pc)
		}
		if truth {
			tc, rc := dash, dash
			if p, ok := res.DUT.TruthAt(r.FrameSize); ok {
				tc = fps(p.ThroughputFPS)
				if r.Found && !r.Incomplete {
					rc = strconv.FormatFloat(r.FPS/p.ThroughputFPS, 'f', 4, 64)
				}
			}
			row = slices.Insert(row, len(row)-1, tc, rc)
		}
		t.add(row...)
	}
	if truth {
		t.Notes = append(t.Notes, "Lab truth: the rate the lab's DUT is set to forward, its shaper's R / (8 × (frame − 4)) fps (tbf counts a frame without its FCS).")
	}
	cfg := res.Plan.Throughput
	tol := "zero loss"
	if cfg.LossTolerancePercent > 0 {
		tol = fmt.Sprintf("loss ≤ %g%%", cfg.LossTolerancePercent)
	}
	if goals {
		var gs []string
		for _, g := range res.Plan.Goals() {
			gs = append(gs, fmt.Sprintf("%s (loss ≤ %g%%, exceed ratio %g, width %g%%, final trials %v)", g.Name, g.LossPercent, g.ExceedRatio, g.WidthPercent, g.FinalDuration))
		}
		tol = "MLRsearch (RFC 9971) goals " + strings.Join(gs, ", ") + "; the throughput is the first goal's"
	}
	if !cfg.AllowBuffering {
		tol += "; a trial whose queue grew through it (not sustained) fails"
	}
	if cfg.MaxLatency > 0 {
		pc := cfg.LatencyPercentile
		name := "max"
		if pc != 0 && pc != 100 {
			name = fmt.Sprintf("P%g", pc)
		}
		tol += fmt.Sprintf("; latency %s ≤ %v", name, cfg.MaxLatency)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("Rates are offered loads of all %d stream(s) together on a %s link; pass criterion: %s.",
		streams(res), bitRate(res.Plan.LinkBps), tol))
	if goals {
		t.Notes = append(t.Notes, "NDR: no-drop rate (0% loss); PDR: partial drop rate (the first goal with loss > 0). Each is a conditional throughput: the forwarding rate at the goal's relevant lower bound (RFC 9971 §4.6.3).")
	}
	if irregular {
		t.Notes = append(t.Notes, "* irregular goal result (RFC 9971 §4.6.4.2): a bound is missing or the bounds are wider than the goal width; see the JSON's goals[].note.")
	}
	if limited {
		t.Notes = append(t.Notes, "≥ X, tester-limited: the tester could not offer more; the DUT forwarded everything it was given, so its throughput is at least X.")
	}
	return t
}

// searchLogTables gives one search log per frame size, the table commercial
// testers print per step.
func searchLogTables(res *rfc2544.Results) []*table {
	var out []*table
	for _, r := range res.Throughput {
		if len(r.Trials) == 0 {
			continue // the throughput table says why
		}
		t := newTable(TableSearchLog, searchLogTitle(r.FrameSize),
			">Step", "Goal", ">Duration (s)", ">Intended (%)", ">Offered (%)", "~>Offered (fps)", ">Sent", "~>Received", ">Frame loss (%)",
			">Lat. min (µs)", ">Lat. avg (µs)", ">Lat. max (µs)", "Outcome")
		for _, tr := range r.Trials {
			lmin, lavg, lmax := latencyCells(tr)
			goal := tr.Goal
			if goal == "" {
				goal = dash
			}
			t.add(strconv.Itoa(tr.Step), goal, durationCell(tr), pct(tr.IntendedPercent), pct(tr.OfferedPercent), fps(tr.OfferedFPS),
				count(tr.Sent), count(tr.Received), pct(tr.LossPercent), lmin, lavg, lmax, outcome(tr))
		}
		if r.Incomplete {
			t.Notes = append(t.Notes, "Incomplete: the run stopped during this search.")
		}
		out = append(out, t)
	}
	return out
}

// latencyCells formats a trial's min/avg/max latency, or dashes when no frame
// was timed.
func latencyCells(tr rfc2544.TrialRecord) (string, string, string) {
	if tr.Received == 0 {
		return dash, dash, dash
	}
	return usec(float64(tr.LatencyMinNs)), usec(tr.LatencyAvgNs), usec(float64(tr.LatencyMaxNs))
}

func latencyTable(res *rfc2544.Results) *table {
	t := newTable(TableLatency, "Latency (RFC 2544 §26.2, RFC 5481)",
		">Frame size (B)", ">Rate (fps)", ">Rate (%)", ">Min (µs)", ">Mean (µs)", ">Max (µs)", "~>P99 (µs)",
		">P99.9 (µs)", ">PDV P99.9 (µs)", "~>Tagged mean (µs)", ">Repetitions", "~>Frames timed", "Note")
	defs := map[string]bool{}
	for _, r := range res.Latency {
		size := framing.SizeName(r.FrameSize)
		if r.Skipped != "" {
			t.add(size, dash, dash, dash, dash, dash, dash, dash, dash, dash, "0", "0", "skipped: "+r.Skipped)
			continue
		}
		defs[r.Definition] = true
		s := r.Summary
		tagged := dash
		if len(r.TaggedNs) > 0 {
			tagged = usec(r.TaggedMeanNs)
		}
		var notes []string
		if r.LostTagged > 0 {
			notes = append(notes, fmt.Sprintf("%d tagged frame(s) lost, left out of the tagged mean", r.LostTagged))
		}
		if r.Incomplete {
			notes = append(notes, "incomplete: the run stopped before every repetition ran")
		}
		if s.Count == 0 {
			t.add(size, fps(r.RateFPS), pct(r.RatePercent), dash, dash, dash, dash, dash, dash, tagged,
				strconv.Itoa(r.Repetitions), "0", joinNotes(append([]string{"no frame was timed"}, notes...)...))
			continue
		}
		t.add(size, fps(r.RateFPS), pct(r.RatePercent), usec(float64(s.MinNs)), usec(s.MeanNs), usec(float64(s.MaxNs)),
			usec(float64(s.P99Ns)), usec(float64(s.P999Ns)), usec(float64(s.PDVP999Ns)), tagged,
			strconv.Itoa(r.Repetitions), count(s.Count), joinNotes(notes...))
		addSizeLatencies(t, r.FrameSize, r.Sizes)
	}
	for _, d := range slices.Sorted(maps.Keys(defs)) {
		if d == "" {
			d = "not recorded"
		}
		t.Notes = append(t.Notes, "Latency definition: "+d+".")
	}
	t.Notes = append(t.Notes, "Statistics cover every timed frame of every repetition at the throughput rate; PDV is D(i) − D(min) (RFC 5481 §4.2); tagged mean averages the RFC 2544 tagged frames.")
	if slices.ContainsFunc(res.Latency, func(r rfc2544.LatencyResult) bool { return len(r.Sizes) > 0 }) {
		t.Notes = append(t.Notes, "A mix's row is followed by one per size of the mix (\"mix: size\"); their P99 and P99.9 are the largest of any repetition's, an upper bound.")
	}
	return t
}

func frameLossTable(res *rfc2544.Results) *table {
	t := newTable(TableFrameLoss, "Frame loss rate (RFC 2544 §26.3)",
		">Frame size (B)", ">Intended (%)", ">Offered (%)", ">Offered (fps)", ">Sent", ">Received", ">Frame loss (%)", "Note")
	for _, r := range res.FrameLoss {
		if r.Skipped != "" {
			t.add(framing.SizeName(r.FrameSize), dash, dash, dash, dash, dash, dash, "skipped: "+r.Skipped)
			continue
		}
		for i, p := range r.Points {
			size := ""
			if i == 0 {
				size = framing.SizeName(r.FrameSize)
			}
			note := ""
			if p.TesterLimited {
				note = "tester-limited"
			}
			if r.Incomplete && i == len(r.Points)-1 {
				note = joinNotes(note, "incomplete: the run stopped during the sweep")
			}
			t.add(size, pct(p.IntendedPercent), pct(p.OfferedPercent), fps(p.OfferedFPS), count(p.Sent), count(p.Received),
				pct(p.LossPercent), note)
			addSizeLosses(t, r.FrameSize, p.Sizes)
		}
		if len(r.Points) == 0 {
			note := "no trials"
			if r.Incomplete {
				note = "incomplete: the run stopped before the sweep began"
			}
			t.add(framing.SizeName(r.FrameSize), dash, dash, dash, dash, dash, dash, note)
		}
	}
	t.Notes = append(t.Notes, "Loss % = (sent − received) × 100 / sent, from frames actually sent. Tester-limited points did not reach the intended load.")
	return t
}

func backToBackTable(res *rfc2544.Results) *table {
	cols := []string{">Frame size (B)", ">Avg burst (frames)", ">Min", ">Max", "~>Std dev", ">Implied buffer (ms)",
		">Corrected buffer (ms)", ">N", "~>Step (frames)", "~>Cap (frames)", "At cap", "Note"}
	truth := false
	for _, p := range res.DUT.Truth {
		truth = truth || p.BackToBackFrames > 0
	}
	if truth {
		cols = slices.Insert(cols, len(cols)-1, ">Lab model (frames)")
	}
	t := newTable(TableBackToBack, "Back-to-back frames (RFC 2544 §26.4, RFC 9004)", cols...)
	add := func(f int, cells ...string) {
		if truth {
			m := dash
			if p, ok := res.DUT.TruthAt(f); ok && p.BackToBackFrames > 0 {
				m = grouped(p.BackToBackFrames, 0)
			}
			cells = slices.Insert(cells, len(cells)-1, m)
		}
		t.add(cells...)
	}
	anyCap := false
	for _, r := range res.BackToBack {
		size := framing.SizeName(r.FrameSize)
		if r.Skipped != "" {
			add(r.FrameSize, size, dash, dash, dash, dash, dash, dash, "0", dash, dash, dash, "skipped: "+r.Skipped)
			continue
		}
		atCap := "no"
		if r.AtCap {
			atCap, anyCap = "YES (invalid)", true
		}
		ge, note := "", ""
		if r.TesterLimited {
			ge, note = "≥ ", "tester-limited: bursts could not be sent at line rate; values are lower bounds"
		}
		if r.Incomplete {
			note = joinNotes(note, "incomplete: the run stopped before every repetition ran")
		}
		add(r.FrameSize, size, ge+grouped(r.AvgFrames, 1), ge+count(r.MinFrames), ge+count(r.MaxFrames), grouped(r.StddevFrames, 1),
			ge+msec(r.ImpliedBufferS), ge+msec(r.CorrectedBufferS), strconv.Itoa(len(r.BurstFrames)),
			count(r.MinStepFrames), count(r.CapFrames), atCap, note)
	}
	t.Notes = append(t.Notes, "Implied buffer = avg burst / line-rate fps; corrected buffer = implied × (1 − throughput / line rate) (RFC 9004 §5). N is the number of repetitions.")
	if truth {
		t.Notes = append(t.Notes, "Lab model: the longest burst the lab's DUT passes by its settings, (queue + bucket frames) / (1 − shaped rate / line rate); the kernel's input queue before the shaper may hold up to netdev_max_backlog frames more while the DUT's CPU is busy.")
	}
	if anyCap {
		t.Notes = append(t.Notes, "At cap: the DUT absorbed the longest burst tried, so its buffer is larger than shown; raise the burst cap (RFC 9004 §6).")
	}
	return t
}

func recoveryTable(res *rfc2544.Results) *table {
	t := newTable(TableRecovery, "System recovery (RFC 2544 §26.5)",
		">Frame size (B)", ">Overload (fps)", ">Overload (%)", ">Recovery load (fps)", ">Recovery time (ms)", "Note")
	for _, r := range res.Recovery {
		size := framing.SizeName(r.FrameSize)
		if r.Skipped != "" {
			t.add(size, dash, dash, dash, dash, "skipped: "+r.Skipped)
			continue
		}
		rt, note := msec(r.RecoveryS), r.Note
		switch {
		case r.Incomplete:
			rt, note = "incomplete", joinNotes("the run stopped during the trial", r.Note)
		case !r.Recovered:
			rt = "not recovered"
			if note == "" {
				note = "frames were still lost when the trial ended"
			}
		}
		t.add(size, fps(r.OverloadFPS), pct(percentOfLine(res, r.FrameSize, r.OverloadFPS)), fps(r.RecoveryFPS), rt, note)
	}
	t.Notes = append(t.Notes, "Overload = min(110% of throughput, line rate); at time A the load drops to half; recovery time = last lost frame − A.")
	return t
}

func probeTable(res *rfc2544.Results) *table {
	t := newTable(TableProbe, "Path probe (before the first trial of each frame size)",
		">Frame size (B)", "Passed", ">Offered (fps)", ">Sent", ">Received", "Reason")
	for _, p := range res.Probes {
		passed := "yes"
		if !p.Passed {
			passed = "NO"
		}
		tr := p.Trial
		t.add(framing.SizeName(p.FrameSize), passed, fps(tr.OfferedFPS), count(tr.Sent), count(tr.Received), p.Reason)
	}
	t.Notes = append(t.Notes, "A size none of whose probe frames cross the path (e.g. above the MTU) reports zero throughput (RFC 2544 §9.4) instead of running a search.")
	return t
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// metadata is the run's description as label/value pairs, shared by the
// text and HTML reports.
func metadata(res *rfc2544.Results) [][2]string {
	var md [][2]string
	add := func(k, v string) {
		if v != "" {
			md = append(md, [2]string{k, v})
		}
	}
	add("Tool", orDash(res.Tool))
	add("Schema", strconv.Itoa(res.Schema))
	add("Started", when(res.Started))
	add("Finished", when(res.Finished))
	if !res.Started.IsZero() && !res.Finished.IsZero() {
		add("Duration", res.Finished.Sub(res.Started).Round(1e9).String())
	}
	if res.Error != "" {
		add("Stopped early", res.Error)
	}
	add("DUT", orDash(res.DUT.Description))
	if len(res.DUT.Settings) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(res.DUT.Settings)) {
			kv = append(kv, k+"="+res.DUT.Settings[k])
		}
		add("DUT settings", strings.Join(kv, "; "))
	}
	tester := res.Tester
	add("Tester", testerLine(tester))
	if tester.Host != "" || tester.Kernel != "" {
		add("Tester host", strings.TrimSpace(tester.Host+" "+tester.Kernel))
	}
	ts := orDash(tester.Paths.Timestamps)
	if tester.Paths.Fallback != "" {
		ts += " (" + tester.Paths.Fallback + ")"
	}
	add("Timestamps", ts)
	if len(tester.Calibration) > 0 {
		var c []string
		for _, p := range tester.Calibration {
			c = append(c, fmt.Sprintf("%d B %s fps", p.FrameSize, fps(p.CeilingFPS)))
		}
		add("Tester ceiling", strings.Join(c, "; ")+" (per stream)")
	} else {
		add("Tester ceiling", "not calibrated")
	}
	p := res.Plan
	ip := "IPv4/UDP"
	if p.IPv6 {
		ip = "IPv6/UDP"
	}
	dir := "unidirectional (A->B)"
	if p.Bidirectional {
		dir = "bidirectional (A->B and B->A)"
	}
	flows := ""
	if p.Flows > 1 {
		flows = fmt.Sprintf(", %d flows per stream", p.Flows)
	}
	add("Plan", fmt.Sprintf("profile %s; tests %s", orDash(p.Profile), joinNames(p.Tests)))
	add("Traffic", fmt.Sprintf("%s link, %s, %s%s", bitRate(p.LinkBps), ip, dir, flows))
	add("Frame sizes", sizeNames(p.FrameSizes)+" bytes")
	if p.NoProbe {
		add("Path probe", "off")
	}
	add("Trial", fmt.Sprintf("duration %v, learning %v, settle %v, rest %v", p.Trial.Duration, p.Trial.Learning, p.Trial.Settle, p.Trial.Rest))
	tc := p.Throughput
	switch {
	case tc.Search == rfc2544.SearchMLR:
		var gs []string
		for _, g := range p.Goals() {
			gs = append(gs, fmt.Sprintf("%s loss %g%% exceed %g width %g%% trials %v…%v sum %v", g.Name, g.LossPercent, g.ExceedRatio, g.WidthPercent, g.InitialDuration, g.FinalDuration, g.DurationSum))
		}
		add("Throughput search", fmt.Sprintf("mlr (RFC 9971), range %g–%g%%, max %d trials per goal; goals: %s", tc.MinPercent, tc.MaxPercent, tc.MaxTrials, strings.Join(gs, "; ")))
	case tc.ResolutionPercent == 0:
		add("Throughput search", fmt.Sprintf("%s, initial %g%%, range %g–%g%%, resolution %g%% of the load, loss tolerance %g%%, step %g%%, max %d trials",
			orDash(string(tc.Search)), tc.InitialPercent, tc.MinPercent, tc.MaxPercent, tc.ResolutionRelativePercent, tc.LossTolerancePercent, tc.StepPercent, tc.MaxTrials))
	default:
		add("Throughput search", fmt.Sprintf("%s, initial %g%%, range %g–%g%%, resolution %g%%, loss tolerance %g%%, step %g%%, max %d trials",
			orDash(string(tc.Search)), tc.InitialPercent, tc.MinPercent, tc.MaxPercent, tc.ResolutionPercent, tc.LossTolerancePercent, tc.StepPercent, tc.MaxTrials))
	}
	if tc.AllowBuffering || tc.MaxLatency > 0 {
		add("Pass criteria", fmt.Sprintf("allow buffering %v, max latency %v (percentile %g)", tc.AllowBuffering, tc.MaxLatency, tc.LatencyPercentile))
	}
	add("Latency", fmt.Sprintf("duration %v, %d repetitions", p.Latency.Duration, p.Latency.Repetitions))
	full := ""
	if p.FrameLoss.FullSweep {
		full = ", full sweep"
	}
	add("Frame loss", fmt.Sprintf("step %g%%%s", p.FrameLoss.StepPercent, full))
	step := "default"
	if p.BackToBack.MinStepFrames > 0 {
		step = fmt.Sprintf("%d frames", p.BackToBack.MinStepFrames)
	}
	if p.BackToBack.MinStepFrames == 0 && p.BackToBack.MinStepPercent > 0 {
		step = fmt.Sprintf("%g%% of the cap", p.BackToBack.MinStepPercent)
	}
	add("Back-to-back", fmt.Sprintf("burst cap %v, %d repetitions, min step %s", p.BackToBack.BurstCap, p.BackToBack.Repetitions, step))
	add("System recovery", fmt.Sprintf("overload %v, recovery %v", p.Recovery.Overload, p.Recovery.Recovery))
	return md
}

func testerLine(t rfc2544.TesterInfo) string {
	tr := "transport " + orDash(t.Transport)
	if t.TransportWhy != "" {
		tr += " (" + t.TransportWhy + ")"
	}
	parts := []string{tr}
	if t.Paths.TX != "" {
		tx := "tx " + t.Paths.TX
		if t.Paths.QdiscBypass {
			tx += " (qdisc bypass)"
		}
		if t.Paths.TxSched != "" {
			tx += " (sending threads " + t.Paths.TxSched + ")"
		}
		parts = append(parts, tx)
	}
	if t.Paths.RX != "" {
		parts = append(parts, "rx "+t.Paths.RX)
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// hasGoals reports whether an mlr search gave goal results.
func hasGoals(res *rfc2544.Results) bool {
	for _, r := range res.Throughput {
		if len(r.Goals) > 0 {
			return true
		}
	}
	return false
}

// goalCell formats a goal's conditional throughput: a dash without the
// goal, "not found", "≥ X" when tester-limited, "X *" when irregular.
func goalCell(g *rfc2544.GoalResult) (cell string, irregular bool) {
	switch {
	case g == nil:
		return dash, false
	case !g.Found:
		return "not found", false
	case g.TesterLimited:
		return "≥ " + fps(g.ConditionalFPS), false
	case !g.Regular:
		return fps(g.ConditionalFPS) + " *", true
	}
	return fps(g.ConditionalFPS), false
}

// durationCell is a trial's traffic duration in seconds.
func durationCell(tr rfc2544.TrialRecord) string {
	d := tr.DurationS
	if d == 0 {
		d = tr.Result.Spec.Duration.Seconds()
	}
	if d == 0 {
		return dash
	}
	return strconv.FormatFloat(d, 'g', 4, 64)
}
