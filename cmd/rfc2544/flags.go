package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rfc2544/rfc2544/internal/rate"
)

// This file holds the flag values and parsers shared by the verbs. Every
// parser returns an error that names the flag, the value and the fix.

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
