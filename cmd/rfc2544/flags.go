package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// This file holds the flag values and parsers shared by the verbs. Every
// parser returns an error that names the flag, the value and the fix.

// labTemporary is what an --lab without a name becomes after fixLabArg: the
// run creates a temporary lab and removes it afterwards.
const labTemporary = "\x00temporary"

// labFlag is --lab [NAME]. Go's flag package has no optional values, so
// fixLabArg rewrites a bare --lab before parsing.
type labFlag struct {
	set  bool
	name string // labTemporary for a temporary lab
}

func (l *labFlag) String() string {
	if l == nil || !l.set {
		return ""
	}
	if l.name == labTemporary {
		return "(temporary)"
	}
	return l.name
}

func (l *labFlag) Set(s string) error {
	l.set = true
	if s == "" {
		s = labTemporary
	}
	l.name = s
	return nil
}

// temporary reports whether the run creates its own lab.
func (l *labFlag) temporary() bool { return l.set && l.name == labTemporary }

// fixLabArg rewrites a bare "--lab" (or "-lab") that is followed by another
// flag or by nothing into "--lab=", which labFlag reads as "temporary lab".
// "--lab NAME" and "--lab=NAME" are left alone. Arguments after "--" are not
// flags and are not touched.
func fixLabArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--lab" || a == "-lab" {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				out = append(out, "--lab=")
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// parseSizes reads --sizes: a comma-separated list of frame sizes in bytes,
// FCS included. Their range is checked with the plan's frame_sizes
// (rfc2544.Plan.Validate).
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--sizes %s: an empty item; write them like --sizes 64,512,1518", quoteShort(s))
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("--sizes %s: %s is not a frame size in bytes; write them like --sizes 64,512,1518", quoteShort(s), quoteShort(f))
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// testNames maps the names accepted by --tests (and the verbs) to tests.
var testNames = map[string]rfc2544.Test{
	"throughput":      rfc2544.TestThroughput,
	"latency":         rfc2544.TestLatency,
	"loss":            rfc2544.TestFrameLoss,
	"frame_loss":      rfc2544.TestFrameLoss,
	"b2b":             rfc2544.TestBackToBack,
	"back_to_back":    rfc2544.TestBackToBack,
	"recovery":        rfc2544.TestRecovery,
	"system_recovery": rfc2544.TestRecovery,
}

// parseTests reads --tests: a comma-separated list of tests, in the order
// they are listed.
func parseTests(s string) ([]rfc2544.Test, error) {
	var tests []rfc2544.Test
	seen := map[rfc2544.Test]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			return nil, fmt.Errorf("--tests %s: an empty item; e.g. --tests throughput,latency", quoteShort(s))
		}
		if f == "all" {
			for _, t := range []rfc2544.Test{rfc2544.TestThroughput, rfc2544.TestLatency, rfc2544.TestFrameLoss, rfc2544.TestBackToBack} {
				if !seen[t] {
					seen[t] = true
					tests = append(tests, t)
				}
			}
			continue
		}
		t, ok := testNames[f]
		if !ok {
			return nil, fmt.Errorf("--tests %s: unknown test %s; choose from throughput, latency, loss, b2b, recovery or all", quoteShort(s), quoteShort(f))
		}
		if !seen[t] {
			seen[t] = true
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("--tests %s: no test given; e.g. --tests throughput,latency", quoteShort(s))
	}
	return tests, nil
}

// parseBitRate reads a bit rate such as 10G, 2.5Gbit/s, 100M, 1e9 or
// 800kbps, in bits per second. Suffixes are decimal (k = 1000).
func parseBitRate(flagName, s string) (float64, error) {
	fail := func() (float64, error) {
		return 0, fmt.Errorf("%s %s: not a bit rate; write it like 10G, 2.5G, 100M or 1000000000 (bits per second)", flagName, quoteShort(s))
	}
	v := strings.ToLower(strings.TrimSpace(s))
	for _, suf := range []string{"bit/s", "bps", "b/s", "bit", "b"} {
		if strings.HasSuffix(v, suf) {
			v = strings.TrimSuffix(v, suf)
			break
		}
	}
	mult := 1.0
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 'k':
			mult, v = 1e3, v[:n-1]
		case 'm':
			mult, v = 1e6, v[:n-1]
		case 'g':
			mult, v = 1e9, v[:n-1]
		case 't':
			mult, v = 1e12, v[:n-1]
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fail()
	}
	bps := f * mult
	if bps <= 0 {
		return 0, fmt.Errorf("%s %s: must be a positive bit rate, e.g. 1G", flagName, quoteShort(s))
	}
	switch {
	case bps < 1e3 && mult == 1:
		// A bare number is bit/s: 100 is likely 100M or 100G.
		return 0, fmt.Errorf("%s %s: %s is below 1 kbit/s (a number without a unit is bit/s); did you mean %sM or %sG?",
			flagName, quoteShort(s), formatBitRate(bps), strings.TrimSpace(s), strings.TrimSpace(s))
	case bps < 1e3:
		return 0, fmt.Errorf("%s %s: %s is below 1 kbit/s; give a rate such as 100M or 10G", flagName, quoteShort(s), formatBitRate(bps))
	case bps > 1e13:
		return 0, fmt.Errorf("%s %s: %s is above 10 Tbit/s; give a rate such as 100G or 400G", flagName, quoteShort(s), formatBitRate(bps))
	}
	return bps, nil
}

// formatBitRate writes bits per second the way parseBitRate reads them.
func formatBitRate(bps float64) string {
	switch {
	case bps >= 1e12:
		return strconv.FormatFloat(bps/1e12, 'g', 6, 64) + " Tbit/s"
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'g', 6, 64) + " Gbit/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'g', 6, 64) + " Mbit/s"
	case bps >= 1e3:
		return strconv.FormatFloat(bps/1e3, 'g', 6, 64) + " kbit/s"
	}
	return strconv.FormatFloat(bps, 'g', 6, 64) + " bit/s"
}

// durationFlag is a duration flag that remembers the raw text so errors can
// quote it, and refuses negative values.
type durationFlag struct {
	name string
	d    time.Duration
}

func (f *durationFlag) String() string {
	if f == nil {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("%s has no unit; write it like %ss or %sms", quoteShort(s), s, s)
		}
		return fmt.Errorf("%s is not a duration; write it like 60s, 500ms or 2m", quoteShort(s))
	}
	if d < 0 {
		return fmt.Errorf("%s is negative; give a positive duration such as 60s", quoteShort(s))
	}
	f.d = d
	return nil
}

// percentFlag is a number of percent ("0.5" or "0.5%"); its range is the
// plan field's, checked by rfc2544.Plan.Validate. rel records the % sign
// (--resolution: relative to the load).
type percentFlag struct {
	v   float64
	rel bool
}

func (f *percentFlag) String() string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *percentFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("%s is not a number of percent, e.g. 0.5", quoteShort(s))
	}
	f.v = v
	f.rel = strings.HasSuffix(strings.TrimSpace(s), "%")
	return nil
}
