package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// mlrResults is a quick mlr run (NDR and PDR goals) on a SimDUT whose
// capacity varies from trial to trial, so NDR and PDR differ.
func mlrResults(t *testing.T) *rfc2544.Results {
	t.Helper()
	p, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	p.LinkBps, p.FrameSizes, p.Tests = 1e9, []int{64, 1518}, []rfc2544.Test{rfc2544.TestThroughput}
	sim := &rfc2544.SimDUT{LinkBps: 1e9, CapacityBps: 0.4e9, Noise: 0.01, Seed: 3}
	res, err := (&rfc2544.Runner{Tester: sim, Plan: p, Sleep: func(context.Context, time.Duration) error { return nil }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMLRReports(t *testing.T) {
	res := mlrResults(t)
	var text bytes.Buffer
	if err := WriteTables(&text, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NDR", "PDR", "(fps)", "Goal", "Duration", "(s)", "NDR final", "MLRsearch (RFC 9971) goals NDR", "conditional throughput"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, res, TableThroughput); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		ndr, pdr := r[col["ndr_conditional_throughput_fps"]], r[col["pdr_conditional_throughput_fps"]]
		if ndr == "" || pdr == "" || r[col["pdr_loss_percent"]] != "0.5" {
			t.Errorf("size %s: ndr %q pdr %q pdr loss %q: want both goals", r[0], ndr, pdr, r[col["pdr_loss_percent"]])
		}
	}
	buf.Reset()
	if err := WriteCSV(&buf, res, TableSearchLog); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ",duration_s,goal,fail_reason,not_sustained") || !strings.Contains(buf.String(), "PDR final") && !strings.Contains(buf.String(), "NDR final") {
		t.Errorf("search log CSV lacks the duration and goal columns:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteHTML(&buf, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "NDR (fps)") || !strings.Contains(buf.String(), "PDR (fps)") {
		t.Error("HTML report lacks the NDR and PDR columns")
	}
	if pts := pdrPoints(res); len(pts) != 2 {
		t.Errorf("chart: %d PDR points, want one per size", len(pts))
	}
	if _, err := ThroughputChart(res); err != nil {
		t.Fatal(err)
	}
	// JSON round trip keeps the goal results.
	buf.Reset()
	if err := WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g := back.Throughput[0].Goals; len(g) != 2 || !g[0].Found || g[0].ConditionalFPS <= 0 || g[1].ConditionalFPS < g[0].ConditionalFPS {
		t.Errorf("goals after a JSON round trip: %+v", g)
	}
}
