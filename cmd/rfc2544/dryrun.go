package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// dryRun prints the effective plan and what the run would do, and sends
// nothing. The output is itself a plan file (the rest are YAML comments), or
// JSON with --json.
func dryRun(_ context.Context, s *runSetup, stdout io.Writer) error {
	if s.flags.json {
		out := struct {
			Transport string   `json:"transport"`
			Why       string   `json:"transport_why"`
			LineBps   float64  `json:"line_bps"`
			CapBps    float64  `json:"max_rate_bps"`
			Ports     []string `json:"ports,omitempty"`
			Lab       string   `json:"lab,omitempty"`
			Out       string   `json:"out"`
			Plan      any      `json:"plan"`
			// ExpectedS is the estimated tester time of the run.
			ExpectedS float64 `json:"expected_duration_s"`
		}{s.transport, s.why, s.plan.LinkBps, s.capBps, nil, s.labName, s.out, s.plan, 0}
		est, _ := s.plan.WithDefaults().Estimate()
		out.ExpectedS = est.Seconds()
		for _, p := range s.ports {
			out.Ports = append(out.Ports, p.String())
		}
		if s.tempLab {
			out.Lab = "temporary: " + s.labCfg.Summary()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# rfc2544 %s --dry-run: the effective plan; nothing was created or sent.\n", s.verb)
	fmt.Fprintf(&b, "# transport: %s (%s)\n", s.transport, s.why)
	switch {
	case s.tempLab:
		fmt.Fprintf(&b, "# lab: a temporary lab %s would be created and removed (%s)\n", s.labCfg.Name, s.labCfg.Summary())
	case s.labName != "":
		fmt.Fprintf(&b, "# lab: %s\n", s.labName)
	}
	for _, p := range s.ports {
		fmt.Fprintf(&b, "# %s\n", p.String())
	}
	fmt.Fprintf(&b, "# line rate: %s\n", lineRateNote(s.plan.LinkBps, s.lineNote))
	fmt.Fprintf(&b, "# rate cap: %s (%s)\n", formatBitRate(s.capBps), s.capNote)
	fmt.Fprintf(&b, "# output folder: %s\n", s.out)
	est, n := s.plan.WithDefaults().Estimate()
	fmt.Fprintf(&b, "# expected duration: about %v of tester time, %d trials (an estimate from the plan; searches depend on the DUT)\n", est.Round(time.Second), n)
	y, err := s.plan.YAML()
	if err != nil {
		return err
	}
	b.Write(y)
	_, err = io.WriteString(stdout, b.String())
	return err
}
