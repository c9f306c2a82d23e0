package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/rate"
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
// FCS included, and mixes by name (imix: framing.ParseSize). Their range is checked with the plan's frame_sizes
// (rfc2544.Plan.Validate).
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--sizes %s: an empty item; write them like --sizes 64,512,1518", quoteShort(s))
		}
		n, err := framing.ParseSize(f)
		if err != nil {
			return nil, fmt.Errorf("--sizes %s: %s is not a frame size in bytes nor a mix (imix, imix-csit); write them like --sizes 64,512,1518 or 64,imix,1518", quoteShort(s), quoteShort(f))
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

// parseBitRate reads a bit rate in the module's one rate grammar
// (internal/rate), in bits per second; errors name the flag.
func parseBitRate(flagName, s string) (float64, error) {
	bps, err := rate.ParseBits(s)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", flagName, quoteShort(s), err)
	}
	return bps, nil
}

// formatBitRate writes bits per second the way parseBitRate reads them.
func formatBitRate(bps float64) string { return rate.Format(bps) }

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
