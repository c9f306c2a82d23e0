// Package reports renders rfc2544.Results: text tables (tablewriter), the
// versioned JSON results file, CSV per table, charts (gonum/plot, SVG and
// PNG), a one-file HTML report, and run-vs-run comparisons. Every renderer
// is a pure function of results writing to an io.Writer, in the style of
// vegeta's reporters; nothing here runs traffic.
//
// Results files:
//
//	WriteJSON(w, res)            // results.json, fields documented in SCHEMA.md
//	ReadResults(r), ReadResultsFile(path) // refuse newer schemas and corrupt JSON with line/column;
//	                             // the file: regular, at most MaxResultsBytes
//
// Tables (Table names them: throughput, search_log, latency, frame_loss,
// back_to_back, system_recovery, probe):
//
//	WriteTables(w, res)          // metadata and every table, as testers print them
//	WriteTable(w, res, table, wide) // one table
//	WriteCSV(w, res, table)      // one table as CSV, units in the column names
//	WriteHTML(w, res)            // self-contained page: metadata, tables, inline SVG charts, print CSS
//	TablesIn(res), HasTable(res, t), OnlyTable(res, t), TableCharts(res, t) // what a results file holds
//
// Charts (ChartKind: throughput, latency, frame_loss, latency_cdf, and the
// other forms latency_percentile, throughput_percent, frame_loss_log):
//
//	WriteChart(w, res, kind, SVG|PNG)
//	ThroughputChart, LatencyChart, FrameLossChart, LatencyCDFChart(res) (*plot.Plot, error)
//	LatencyPercentileChart, ThroughputPercentChart, FrameLossLogChart(res) (*plot.Plot, error)
//	WritePlot(w, plot, format)
//
// Comparisons:
//
//	c := Compare(a, b)           // per test, frame size and metric: A, B, B − A, B / A
//	WriteComparison(w, c)        // text tables; sizes in one run only show as "— (only in B)"
//	WriteComparisonChart(w, c, SVG|PNG) // throughput of both runs over frame size
//	c.OnlyTest(test), WriteComparisonJSON(w, c), WriteRunsJSON(w, CompareRuns(runs, RunLabels(files)))
//
// Golden files in testdata/ are rendered from the fixed results files in
// ../testdata/results; regenerate them with go test ./reports -update.
package reports
