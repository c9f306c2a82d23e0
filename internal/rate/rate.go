// Package rate is the one grammar of rates on this module's command lines
// and in its plan files: bit rates (--max-rate, --line-rate, --sim-capacity,
// the lab's --rate, the agent's --max-rate), frame rates and loads in
// percent of the line rate.
//
//	bits per second   50M 50m 50Mbit 50mbit 50Mbit/s 50Mb/s 50000000 5e7 5e7bps 1Gibit
//	frames per second 148809fps 148.8kpps 1.488Mpps   (where a frame rate is meant)
//	percent of line   90%                              (where a load is meant)
//
// Prefixes are decimal (k, M, G, T, either case) or binary (Ki, Mi, Gi, Ti).
// A spelling that tc(8) reads as bytes per second (kbps, mbps, Mbps, gbps,
// MBps, MB/s, byte/s) is refused, naming both readings: "50mbps" is
// 50 Mbit/s to a network engineer and 400 Mbit/s to tc, and a tester that
// picks one silently sends 8 times too much or too little.
package rate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is what a rate counts.
type Kind int

const (
	// Bits is bits per second.
	Bits Kind = iota + 1
	// Frames is frames (packets) per second.
	Frames
	// Percent is a load in percent of the line rate.
	Percent
)

func (k Kind) String() string {
	switch k {
	case Bits:
		return "bit rate"
	case Frames:
		return "frame rate"
	case Percent:
		return "load in percent of the line rate"
	}
	return "rate"
}

// example is a spelling of each kind for error messages.
func (k Kind) example() string {
	switch k {
	case Frames:
		return "148.8kpps or 1.488Mpps"
	case Percent:
		return "90%"
	}
	return "10G, 2.5Gbit/s, 100M or 50mbit"
}

// Limits of what a rate may be: below MinBits a bit rate is a missing
// unit ("100" is likely 100M), above MaxBits it is a typo.
const (
	MinBits = 1e3
	MaxBits = 1e13
	// MaxFrames is 10 Tbit/s of 64-byte frames.
	MaxFrames = MaxBits / ((64 + 20) * 8)
)

// Rate is a parsed rate: Value in the unit of its Kind (bit/s, frame/s or
// percent).
type Rate struct {
	Kind  Kind
	Value float64
}

// Parse reads s as one of kinds; a number without a unit is of kinds[0].
// A rate of another kind than those given is an error saying what was
// written and what is wanted. Values must be positive and within the
// limits above (a load at most 100 %).
func Parse(s string, kinds ...Kind) (Rate, error) {
	if len(kinds) == 0 {
		kinds = []Kind{Bits}
	}
	t := strings.TrimSpace(s)
	num, unit := split(t)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Rate{}, fmt.Errorf("not a %s; write it like %s", kinds[0], kinds[0].example())
	}
	kind, mult, err := parseUnit(num, unit, v)
	if err != nil {
		return Rate{}, err
	}
	if kind == 0 {
		kind = kinds[0]
		if unit != "" && kind == Percent && has(kinds, Bits) {
			kind = Bits // a prefix without a unit: 900M is a bit rate
		}
	}
	if !has(kinds, kind) {
		return Rate{}, fmt.Errorf("%s is a %s; a %s is wanted here, e.g. %s", t, kind, kinds[0], kinds[0].example())
	}
	r := Rate{Kind: kind, Value: v * mult}
	if !(r.Value > 0) {
		return Rate{}, fmt.Errorf("must be a positive %s, e.g. %s", kind, kind.example())
	}
	switch kind {
	case Bits:
		switch {
		case r.Value < MinBits && unit == "":
			return Rate{}, fmt.Errorf("%s is below 1 kbit/s (a number without a unit is bit/s); did you mean %sM or %sG?", Format(r.Value), t, t)
		case r.Value < MinBits:
			return Rate{}, fmt.Errorf("%s is below 1 kbit/s; give a rate such as 100M or 10G", Format(r.Value))
		case r.Value > MaxBits:
			return Rate{}, fmt.Errorf("%s is above 10 Tbit/s; give a rate such as 100G or 400G", Format(r.Value))
		}
	case Frames:
		if r.Value > MaxFrames {
			return Rate{}, fmt.Errorf("%s frame/s is above 10 Tbit/s of 64-byte frames; give a rate such as 1.488Mpps", strconv.FormatFloat(r.Value, 'g', 6, 64))
		}
	case Percent:
		if r.Value > 100 {
			return Rate{}, fmt.Errorf("%s%% is above 100%% of the line rate; give a load such as 90%%", strconv.FormatFloat(r.Value, 'g', 6, 64))
		}
	}
	return r, nil
}

// ParseBits reads a bit rate, in bits per second.
func ParseBits(s string) (float64, error) {
	r, err := Parse(s, Bits)
	return r.Value, err
}

// ParseFrames reads a frame rate, in frames per second: 148809, 148.8kpps,
// 1.488Mpps, 100fps.
func ParseFrames(s string) (float64, error) {
	r, err := Parse(s, Frames)
	return r.Value, err
}

// Format writes bits per second the way people read them and Parse reads
// them back: "50 Mbit/s".
func Format(bps float64) string {
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

// ErrBytes is wrapped by the error for a byte-rate spelling.
var ErrBytes = errors.New("a byte-rate spelling")

// split cuts s into its number and its unit: "1.5e9bit" is "1.5e9", "bit".
func split(s string) (num, unit string) {
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == '.':
		case (c == '+' || c == '-') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'):
		case (c == 'e' || c == 'E') && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+'):
		default:
			return s[:i], strings.TrimSpace(s[i:])
		}
		i++
	}
	return s, ""
}

var prefixes = map[string]float64{
	"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
	"ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40,
}

// parseUnit returns the kind a unit names (0: none, the caller's default)
// and its multiplier. num and v are for the byte-rate message.
func parseUnit(num, unit string, v float64) (Kind, float64, error) {
	if unit == "" {
		return 0, 1, nil
	}
	if unit == "%" {
		return Percent, 1, nil
	}
	u := strings.ToLower(unit)
	if m, ok := prefixes[u]; ok {
		return 0, m, nil // a bare prefix: 10G, 148.8k
	}
	for _, suf := range []string{"pps", "fps", "frames/s", "packets/s"} {
		if p, ok := strings.CutSuffix(u, suf); ok {
			if m, ok := prefixes[p]; ok {
				return Frames, m, nil
			}
		}
	}
	// Bytes: a capital B (MBps, MB/s, Bps), the word byte, or tc's
	// spelling of bytes per second with a prefix (kbps, mbps, gbps).
	pre, bytesBps := strings.CutSuffix(u, "bps")
	bytesBps = bytesBps && pre != ""
	if strings.Contains(unit, "B") || strings.Contains(u, "byte") || bytesBps {
		p := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(u, "ytes/s"), "yte/s"), "/s"), "ps"), "b")
		p = strings.TrimSuffix(p, "b")
		m, ok := prefixes[p]
		if !ok {
			m = 1
		}
		n := num + unit
		return 0, 0, fmt.Errorf("%s is ambiguous (%w): tc reads it as bytes per second (%s), common usage as bits per second (%s); write %s for %s, or %s for tc's reading",
			n, ErrBytes, Format(v*m*8), Format(v*m), num+prefixUnit(p)+"bit/s", Format(v*m), strconv.FormatFloat(v*8, 'g', -1, 64)+prefixUnit(p)+"bit/s")
	}
	for _, suf := range []string{"bits/s", "bit/s", "b/s", "bps", "bits", "bit"} {
		if p, ok := strings.CutSuffix(u, suf); ok {
			if m, ok := prefixes[p]; ok {
				return Bits, m, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("unit %q unknown; a bit rate is written like 10G, 2.5Gbit/s, 100M or 50mbit, a frame rate like 1.488Mpps", unit)
}

// prefixUnit is the usual spelling of a lower-case prefix: "m" is "M".
func prefixUnit(p string) string {
	switch p {
	case "k":
		return "k"
	case "":
		return ""
	}
	return strings.ToUpper(p[:1]) + p[1:]
}

func has(kinds []Kind, k Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}
