package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// This file renders an RFC 6349 TCP throughput test (rfc2544.TCPResult):
// the steps and metrics as text, the per-period samples as CSV, and an HTML
// report with throughput and RTT over time.

// TCPOutputs are the files 'rfc2544 tcp --out DIR' writes: the result as
// JSON (tcp.json, SCHEMA.md's TCPResult), the text report, the samples as
// CSV and the HTML report.
func TCPOutputs(r rfc2544.TCPResult) []Output {
	return []Output{
		{"tcp.json", func(w io.Writer) error { return WriteTCPJSON(w, r) }},
		{"report.txt", func(w io.Writer) error { return WriteTCPText(w, r) }},
		{"samples.csv", func(w io.Writer) error { return WriteTCPCSV(w, r) }},
		{"report.html", func(w io.Writer) error { return WriteTCPHTML(w, r) }},
	}
}

// WriteTCPJSON writes r as 'rfc2544 tcp --json' prints it: indented JSON,
// text as written (no HTML escaping); SCHEMA.md documents its fields.
func WriteTCPJSON(w io.Writer, r rfc2544.TCPResult) error { return writeTCPJSON(w, r) }

// writeTCPJSON encodes v indented, text as written (no HTML escaping).
func writeTCPJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write tcp result: %w", err)
	}
	return nil
}

// WriteTCPJSONBoth writes a test in both directions at once as 'rfc2544
// tcp --both --json' prints it: an array of the two results, indented.
func WriteTCPJSONBoth(w io.Writer, r [2]rfc2544.TCPResult) error { return writeTCPJSON(w, r) }

// tcpMetrics are the RFC 6349 steps and metrics, label and value, in the
// order the test runs them.
func tcpMetrics(r rfc2544.TCPResult) [][2]string {
	rtt := time.Duration(r.BaselineRTTNs)
	var dir [][2]string
	if r.Direction != "" {
		dir = [][2]string{{"Direction", r.Direction}}
	}
	return append(dir, [][2]string{
		{"Path MTU", fmt.Sprintf("%d bytes (MSS %d bytes of payload per full segment)", r.PathMTU, r.MSSBytes)},
		{"Baseline RTT", fmt.Sprintf("%v (min of %d on the idle path; mean %v)", rtt, r.Plan.RTTProbes, time.Duration(r.BaselineMeanNs))},
		{"Bottleneck bandwidth", fmt.Sprintf("%.6g Mbit/s (%s)", r.Plan.BottleneckBps/1e6, r.Plan.BottleneckSource)},
		{"BDP", fmt.Sprintf("%.0f bytes", r.BDPBytes)},
		{"Window x connections", fmt.Sprintf("%d bytes x %d (%s)", r.WindowBytes, r.Streams, r.WindowSource)},
		{"Maximum achievable", fmt.Sprintf("%.6g Mbit/s (%s)", r.MaxBps/1e6, r.MaxFormula)},
		{"TCP throughput", fmt.Sprintf("%.6g Mbit/s = %.1f %% of the maximum (%d bytes in %.3f s)", r.ThroughputBps/1e6, r.PercentOfMax, r.Run.Bytes, r.Run.Seconds)},
		{"TCP transfer time ratio", fmt.Sprintf("%.3f (actual %.3f s / ideal %.3f s)", r.TransferTimeRatio, r.ActualTransferS, r.IdealTransferS)},
		{"TCP efficiency", tcpEfficiency(r)},
		{"Buffer delay", fmt.Sprintf("%.1f %% (mean RTT during the transfer %v over the baseline)", r.BufferDelayPercent, time.Duration(r.Run.MeanRTTNs))},
	}...)
}

func tcpEfficiency(r rfc2544.TCPResult) string {
	if r.EfficiencyPercent < 0 {
		return "unknown (the kernel does not count bytes sent)"
	}
	return fmt.Sprintf("%.3f %% (%d bytes sent, %d retransmitted)", r.EfficiencyPercent, r.Run.BytesSent, r.Run.BytesRetrans)
}

// WriteTCPText prints an RFC 6349 result: the steps and metrics, then the
// per-period samples.
func WriteTCPText(w io.Writer, r rfc2544.TCPResult) error {
	if _, err := fmt.Fprintln(w, "RFC 6349 TCP throughput test"); err != nil {
		return err
	}
	for _, m := range tcpMetrics(r) {
		fmt.Fprintf(w, "%-25s %s\n", m[0], m[1])
	}
	fmt.Fprintf(w, "\n%8s  %12s  %10s  %12s  %12s  %12s\n", "time (s)", "Mbit/s", "RTT (ms)", "cwnd (B)", "peer wnd (B)", "retrans (B)")
	for _, s := range r.Run.Samples {
		if _, err := fmt.Fprintf(w, "%8.1f  %12.3f  %10.2f  %12d  %12d  %12d\n", s.AtS, s.Bps/1e6, float64(s.RTTNs)/1e6, s.CwndBytes,
			s.PeerWindowBytes, s.RetransBytes); err != nil {
			return err
		}
	}
	return nil
}

// WriteTCPCSV writes the transfer's per-period samples (TCPResult
// run.samples), one row each, the columns named as their JSON fields.
func WriteTCPCSV(w io.Writer, r rfc2544.TCPResult) error {
	cw := csv.NewWriter(w)
	rows := [][]string{{"at_s", "bps", "rtt_ns", "cwnd_bytes", "peer_window_bytes", "retrans_bytes"}}
	for _, s := range r.Run.Samples {
		rows = append(rows, []string{raw(s.AtS), raw(s.Bps), strconv.FormatInt(s.RTTNs, 10), strconv.FormatInt(s.CwndBytes, 10),
			strconv.FormatInt(s.PeerWindowBytes, 10), strconv.FormatUint(s.RetransBytes, 10)})
	}
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("write tcp csv: %w", err)
	}
	return nil
}

// TCPThroughputChart plots the transfer's throughput (Mbit/s) per period
// against time, with the maximum achievable as a dashed line.
func TCPThroughputChart(r rfc2544.TCPResult) (*plot.Plot, error) {
	return tcpChart(r, "TCP throughput during the transfer", "Throughput (Mbit/s)", func(s trials.TCPSample) float64 { return s.Bps / 1e6 },
		r.MaxBps/1e6, "maximum achievable")
}

// TCPRTTChart plots the connections' RTT (ms) per period against time, with
// the idle path's baseline RTT as a dashed line: the gap is the buffer
// delay.
func TCPRTTChart(r rfc2544.TCPResult) (*plot.Plot, error) {
	return tcpChart(r, "RTT during the transfer", "RTT (ms)", func(s trials.TCPSample) float64 { return float64(s.RTTNs) / 1e6 },
		float64(r.BaselineRTTNs)/1e6, "baseline RTT")
}

func tcpChart(r rfc2544.TCPResult, title, y string, value func(trials.TCPSample) float64, ref float64, refName string) (*plot.Plot, error) {
	if len(r.Run.Samples) == 0 {
		return nil, fmt.Errorf("the TCP result holds no samples: %w", ErrNoData)
	}
	p := newPlot(title, "Time from the first write (s)", y)
	var xys plotter.XYs
	for _, s := range r.Run.Samples {
		xys = append(xys, plotter.XY{X: s.AtS, Y: value(s)})
	}
	l, pts, err := line(xys, colorOf(0), false, draw.CircleGlyph{})
	if err != nil {
		return nil, err
	}
	p.Add(l, pts)
	p.Legend.Add("measured", l, pts)
	if ref > 0 {
		last := r.Run.Samples[len(r.Run.Samples)-1].AtS
		rl, _, err := line(plotter.XYs{{X: 0, Y: ref}, {X: last, Y: ref}}, colorOf(1), true, nil)
		if err != nil {
			return nil, err
		}
		p.Add(rl)
		p.Legend.Add(refName, rl)
	}
	p.Y.Min = 0
	p.Legend.Top = false
	return p, nil
}

// WriteTCPHTML writes a self-contained HTML report of an RFC 6349 result:
// the steps and metrics, throughput and RTT over the transfer, and the
// samples table.
func WriteTCPHTML(w io.Writer, r rfc2544.TCPResult) error {
	rep := htmlReport{
		Title:    "RFC 6349 TCP throughput report",
		Subtitle: fmt.Sprintf("%d connection(s), %.6g Mbit/s bottleneck, %v transfer", r.Streams, r.Plan.BottleneckBps/1e6, r.Plan.Duration),
		Tool:     "rfc2544 tcp",
		Schema:   rfc2544.SchemaVersion,
		Meta:     tcpMetrics(r),
	}
	sec := htmlSection{ID: "transfer", Title: "Transfer"}
	for _, c := range []struct {
		chart   func(rfc2544.TCPResult) (*plot.Plot, error)
		caption string
	}{
		{TCPThroughputChart, "Payload throughput in each sampling period (the receiver's bytes; TCP_INFO bytes_acked when the sender is remote), against RFC 6349's maximum achievable."},
		{TCPRTTChart, "The connections' smoothed RTT (TCP_INFO) at the end of each period, against the idle path's baseline: the gap is the buffer delay."},
	} {
		p, err := c.chart(r)
		if err != nil {
			continue // no samples; the table says so
		}
		svg, err := svgInline(p)
		if err != nil {
			return err
		}
		sec.Charts = append(sec.Charts, htmlChart{SVG: template.HTML(svg), Caption: c.caption})
	}
	t := newTable("tcp_samples", "Samples", ">Time (s)", ">Mbit/s", ">RTT (ms)", ">cwnd (B)", ">Peer window (B)", ">Retransmitted (B)")
	for _, s := range r.Run.Samples {
		t.add(fmt.Sprintf("%.1f", s.AtS), fmt.Sprintf("%.3f", s.Bps/1e6), fmt.Sprintf("%.2f", float64(s.RTTNs)/1e6), count(uint64(max(s.CwndBytes, 0))),
			count(uint64(max(s.PeerWindowBytes, 0))), count(s.RetransBytes))
	}
	if len(r.Run.Samples) == 0 {
		t.Notes = append(t.Notes, "No samples: the transfer ended before the first period.")
	}
	sec.Tables = append(sec.Tables, htmlTableOf(t, false))
	rep.Sections = append(rep.Sections, sec)
	if err := htmlTmpl.Execute(w, rep); err != nil {
		return fmt.Errorf("write tcp html report: %w", err)
	}
	return nil
}
