package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/rfc2544/rfc2544/rfc2544"
)

//go:embed report.html.tmpl
var reportTemplate string

var htmlTmpl = template.Must(template.New("report").Parse(reportTemplate))

type htmlReport struct {
	Title, Subtitle, Tool, Error string
	Schema                       int
	Meta                         [][2]string
	Sections                     []htmlSection
}

type htmlSection struct {
	ID, Title string
	Charts    []htmlChart
	Tables    []htmlTable
}

type htmlChart struct {
	// SVG is markup this package rendered with gonum/plot: trusted.
	SVG     template.HTML
	Caption string
}

type htmlTable struct {
	Title  string
	Sub    bool
	Header []string
	Rows   []htmlRow
	Notes  []string
}

type htmlRow struct {
	Group bool
	Cells []htmlCell
}

type htmlCell struct{ Text, Class string }

// WriteHTML writes a one-file HTML report of res: the run's metadata (tool,
// dates, plan, tester, DUT), every table and every chart, the charts inline
// as SVG. The page fetches nothing (no scripts, external styles or fonts)
// and has a print style sheet (A4 landscape, one test per page).
func WriteHTML(w io.Writer, res *rfc2544.Results) error {
	rep := htmlReport{
		Title:  "RFC 2544 benchmark report",
		Tool:   orDash(res.Tool),
		Error:  res.Error,
		Schema: res.Schema,
		Meta:   metadata(res),
	}
	if res.DUT.Description != "" {
		rep.Title += ": " + res.DUT.Description
	}
	rep.Subtitle = fmt.Sprintf("%s, %s link, started %s", rep.Tool, bitRate(res.Plan.LinkBps), when(res.Started))

	sections := []struct {
		id, title string
		charts    []ChartKind
		tables    []Table
	}{
		{"throughput", "Throughput", []ChartKind{ChartThroughput}, []Table{TableThroughput, TableSearchLog}},
		{"latency", "Latency", []ChartKind{ChartLatency, ChartLatencyCDF, ChartLatencyPercentile}, []Table{TableLatency}},
		{"frame_loss", "Frame loss rate", []ChartKind{ChartFrameLoss}, []Table{TableFrameLoss}},
		{"back_to_back", "Back-to-back frames", nil, []Table{TableBackToBack}},
		{"system_recovery", "System recovery", nil, []Table{TableRecovery}},
		{"probe", "Path probe", nil, []Table{TableProbe}},
	}
	for _, s := range sections {
		sec := htmlSection{ID: s.id, Title: s.title}
		for _, t := range s.tables {
			for i, tb := range buildTables(res, t) {
				sec.Tables = append(sec.Tables, htmlTableOf(tb, i > 0 || t == TableSearchLog))
			}
		}
		if len(sec.Tables) == 0 {
			continue
		}
		for _, k := range s.charts {
			p, err := Chart(res, k)
			if err != nil {
				continue // no data for this chart; the tables say why
			}
			svg, err := svgInline(p)
			if err != nil {
				return err
			}
			sec.Charts = append(sec.Charts, htmlChart{SVG: template.HTML(svg), Caption: chartCaption[k]})
		}
		rep.Sections = append(rep.Sections, sec)
	}
	if err := htmlTmpl.Execute(w, rep); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

var chartCaption = map[ChartKind]string{
	ChartThroughput:        "Measured throughput (all streams) against the theoretical maximum frame rate. Triangles are lower bounds where the tester, not the DUT, set the limit; crosses are sizes with no throughput.",
	ChartLatency:           "Latency of every timed frame at the throughput rate, per frame size (log scale).",
	ChartLatencyCDF:        "Share of frames at or below each latency, at the throughput rate (from the latency histograms).",
	ChartLatencyPercentile: "The same distribution by percentile: the tail (99 %, 99.9 %, 99.99 %) spread over the axis instead of squeezed into the top of the CDF.",
	ChartThroughputPercent: "Measured throughput in % of each frame size's theoretical maximum frame rate.",
	ChartFrameLossLog:      "Frame loss against the offered load actually sent, on a log scale; no loss is drawn at 0, the bottom of the axis; triangles mark tester-limited trials.",
	ChartFrameLoss:         "Frame loss against the offered load actually sent, per frame size; triangles mark trials the tester could not offer as intended (tester-limited).",
}

func htmlTableOf(t *table, sub bool) htmlTable {
	ht := htmlTable{Title: t.Title, Sub: sub, Header: t.Header, Notes: t.Notes}
	for ri, r := range t.Rows {
		row := htmlRow{Group: t.Name == TableFrameLoss && ri > 0 && r[0] != ""}
		for i, c := range r {
			cell := htmlCell{Text: c}
			var cls []string
			if i < len(t.Right) && t.Right[i] {
				cls = append(cls, "num")
			}
			switch {
			case strings.HasPrefix(c, "≥") || strings.HasPrefix(c, "tester-limited"):
				cls = append(cls, "limited")
			case strings.HasPrefix(c, "not found") || strings.HasPrefix(c, "skipped") || strings.HasPrefix(c, "incomplete") ||
				c == "not recovered" || c == "NO" || strings.HasPrefix(c, "YES"):
				cls = append(cls, "missing")
			}
			cell.Class = strings.Join(cls, " ")
			row.Cells = append(row.Cells, cell)
		}
		ht.Rows = append(ht.Rows, row)
	}
	return ht
}
