package reports

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
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
