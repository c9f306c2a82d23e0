package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/rate"
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
