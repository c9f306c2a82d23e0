package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// dash marks a cell with no value.
const dash = "—"

// grouped formats v rounded to prec decimals with thousands separators:
// grouped(1234567.891, 0) = "1,234,568".
func grouped(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dash
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', prec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if v < 0 && strings.Trim(s, "0.") != "" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// fps formats a frame rate in frames per second.
func fps(v float64) string { return grouped(v, 0) }

// mbps formats a bit rate given in bits per second as Mbit/s.
func mbps(bps float64) string { return grouped(bps/1e6, 2) }

// pct formats a percentage with the three decimals testers print.
func pct(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// usec formats nanoseconds as microseconds with three decimals.
func usec(ns float64) string { return grouped(ns/1e3, 3) }

// count formats a frame count.
func count[T ~int | ~int64 | ~uint64](v T) string { return grouped(float64(v), 0) }

// msec formats seconds as milliseconds with three decimals.
func msec(s float64) string { return grouped(s*1e3, 3) }

// raw formats a number for machine-readable output (CSV): shortest exact
// decimal, never an exponent.
func raw(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// bitRate formats a link rate for people: 1 Gbit/s, 10 Gbit/s, 100 Mbit/s.
func bitRate(bps float64) string {
	switch {
	case bps <= 0:
		return "unset"
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'f', -1, 64) + " Gbit/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'f', -1, 64) + " Mbit/s"
	}
	return strconv.FormatFloat(bps, 'f', -1, 64) + " bit/s"
}

// when formats a run timestamp in UTC, or dash when unset.
func when(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

// streams is the number of streams every trial of the run carries: two when
// bidirectional (RFC 2544 §14), else one.
func streams(res *rfc2544.Results) int {
	if res.Plan.Bidirectional {
		return 2
	}
	return 1
}

// lineRateFPS is the run's theoretical maximum at frameSize, all streams
// together, in frames per second.
func lineRateFPS(res *rfc2544.Results, frameSize int) float64 {
	return framing.LineRateFPS(res.Plan.LinkBps, frameSize) * float64(streams(res))
}

// percentOfLine is fps (all streams) as a percentage of the run's line rate.
func percentOfLine(res *rfc2544.Results, frameSize int, v float64) float64 {
	max := lineRateFPS(res, frameSize)
	if max == 0 {
		return 0
	}
	return v / max * 100
}

// outcome formats a trial's outcome with its reason, and says when the
// trial had to be run again because the tester's host stalled.
func outcome(tr rfc2544.TrialRecord) string {
	s := string(tr.Outcome)
	switch {
	case tr.Outcome == rfc2544.OutcomeTesterLimited && tr.TesterLimitReason != "":
		s = fmt.Sprintf("%s: %s", tr.Outcome, tr.TesterLimitReason)
	case tr.Outcome == "":
		s = dash
	case tr.Overload != "":
		s = fmt.Sprintf("%s: %s (the tester's host stalled too: %s)", tr.Outcome, tr.Overload, tr.TesterLimitReason)
	case tr.FailReason != "":
		s = fmt.Sprintf("%s: %s", tr.Outcome, tr.FailReason)
	case tr.NotSustained != "":
		s = fmt.Sprintf("%s (allowed: %s)", tr.Outcome, tr.NotSustained)
	}
	if n := len(tr.RetryReasons); n > 0 {
		s += fmt.Sprintf(" (run %d: %d earlier run(s) discarded, the tester's host stalled: %s)", tr.Attempt, n, strings.Join(tr.RetryReasons, "; "))
	}
	return s
}
