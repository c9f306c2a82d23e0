package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// A run with a mix shows it as a row of its own, named, in every report.
func TestReportsNameTheMix(t *testing.T) {
	p, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	p.LinkBps = 1e9
	p.Tests = []rfc2544.Test{rfc2544.TestThroughput}
	p.FrameSizes = []int{64, framing.SizeIMIX, 1518}
	sim := &rfc2544.SimDUT{LinkBps: 1e9, CapacityBps: 0.5e9}
	res, err := (&rfc2544.Runner{Tester: sim, Plan: p, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var text, csv, html bytes.Buffer
	if err := WriteTables(&text, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csv, res, TableThroughput); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, res); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "csv": csv.String(), "html": html.String()} {
		if !strings.Contains(out, "imix") {
			t.Errorf("%s report does not name the mix", name)
		}
		if strings.Contains(out, "-100") {
			t.Errorf("%s report shows the mix's code -100", name)
		}
	}
	if !strings.Contains(csv.String(), "\nimix,") {
		t.Errorf("csv has no imix row:\n%s", csv.String())
	}
}

// A mix's latency row is followed by a row per size, in the text table and
// the CSV (latency[].sizes).
func TestLatencyRowsPerSize(t *testing.T) {
	p, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	p.LinkBps, p.Tests, p.FrameSizes = 1e9, []rfc2544.Test{rfc2544.TestLatency}, []int{framing.SizeIMIX}
	res := &rfc2544.Results{Tool: "test", Started: time.Unix(0, 0).UTC(), Finished: time.Unix(60, 0).UTC(), Plan: p,
		Tester: rfc2544.TesterInfo{Transport: "raw"},
		Latency: []rfc2544.LatencyResult{{FrameSize: framing.SizeIMIX, RateFPS: 1000, RatePercent: 0.3, Repetitions: 2,
			Summary: trials.LatencySummary{Count: 12, MinNs: 10_000, MeanNs: 20_000, MaxNs: 50_000, P99Ns: 50_000, P999Ns: 50_000, PDVP999Ns: 40_000},
			Sizes: []rfc2544.SizeLatency{
				{FrameSize: 64, Summary: trials.LatencySummary{Count: 7, MinNs: 10_000, MeanNs: 11_000, MaxNs: 12_000, P99Ns: 12_000, P999Ns: 12_000, PDVP999Ns: 2_000}},
				{FrameSize: 570, Summary: trials.LatencySummary{Count: 4, MinNs: 20_000, MeanNs: 25_000, MaxNs: 30_000, P99Ns: 30_000, P999Ns: 30_000, PDVP999Ns: 10_000}},
				{FrameSize: 1518, Summary: trials.LatencySummary{Count: 1, MinNs: 50_000, MeanNs: 50_000, MaxNs: 50_000, P99Ns: 50_000, P999Ns: 50_000}},
			}}},
	}
	var text bytes.Buffer
	if err := WriteTables(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"imix: 64", "imix: 570", "imix: 1518", "one per size of the mix"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("latency table lacks %q:\n%s", want, text.String())
		}
	}
	var out bytes.Buffer
	if err := WriteCSV(&out, res, TableLatency); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("latency CSV has %d rows, want a header, the mix and its 3 sizes:\n%q", len(rows), rows)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	for i, want := range []struct{ size, count, mean string }{{"", "12", "20000"}, {"64", "7", "11000"}, {"570", "4", "25000"}, {"1518", "1", "50000"}} {
		r := rows[i+1]
		if r[0] != "imix" || r[col("sizes.frame_size")] != want.size || r[col("count")] != want.count || r[col("mean_ns")] != want.mean {
			t.Errorf("row %d: %q, want imix, size %q, count %s, mean %s", i+1, r, want.size, want.count, want.mean)
		}
	}
}
