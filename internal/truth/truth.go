// Package truth marks the tests of the accuracy claims the README makes and
// records what each run measured, for the truth campaign
// (internal/truth/campaign.sh). CI gates on what is certain; a measured
// throughput, latency or loss compared with the lab's ground truth within a
// window fails now and then by chance on a busy 2-CPU VM, so such a test
// runs only in the campaign, N times with parameters drawn at run time,
// and the campaign prints the table the README quotes.
package truth

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"
)

// Env is the variable the campaign sets to run claims ("1").
const Env = "RFC2544_TRUTH"

// SkipPrefix starts the skip reason of a claim outside the campaign; CI
// allows skips with this reason (.ci/testjson.go).
const SkipPrefix = "truth campaign claim"

// Claim is one accuracy claim's test in one run.
type Claim struct {
	t  testing.TB
	id string
}

// Enabled says whether this process runs claims (Env is "1").
func Enabled() bool { return os.Getenv(Env) == "1" }

// New marks t as the test of claim id (a short name the README's table
// uses, e.g. "ndr-default-queue"): outside the campaign it skips t with
// the reason SkipPrefix, so CI lists it and does not run it.
func New(t testing.TB, id string) *Claim {
	t.Helper()
	if !Enabled() {
		t.Skipf("%s %s: statistical, measured by the truth campaign (internal/truth/campaign.sh; %s=1 runs it)", SkipPrefix, id, Env)
	}
	return &Claim{t: t, id: id}
}

// Record is one measurement of a claim against its ground truth: one line
// of the campaign's table per (Claim, What).
type Record struct {
	Claim string `json:"claim"`
	// What names the measured quantity and its case, e.g. "ndr/R" or
	// "latency min − D, ms".
	What string `json:"what"`
	// Truth is the ground truth the lab set (in the unit of Measured);
	// Lo and Hi bound Measured/Truth (or Measured, when Truth is 0).
	Truth    float64 `json:"truth"`
	Measured float64 `json:"measured"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Pass     bool    `json:"pass"`
	// Case is what was drawn for this run (rate, size, delay …).
	Case string `json:"case,omitempty"`
}

// Line is the prefix of a Record's log line, which the campaign reads.
const Line = "TRUTH "

// Ratio checks measured/truth within [lo, hi], logs the Record and fails
// the test outside it. It returns whether it passed.
func (c *Claim) Ratio(what, kase string, truth, measured, lo, hi float64) bool {
	c.t.Helper()
	r := measured / truth
	return c.record(Record{Claim: c.id, What: what, Truth: truth, Measured: measured, Lo: lo, Hi: hi, Case: kase, Pass: r >= lo && r <= hi})
}

// Within checks measured within [lo, hi] in its own unit (truth 0: a
// bound, not a ratio, e.g. a latency excess in ms), logs the Record and
// fails the test outside it.
func (c *Claim) Within(what, kase string, measured, lo, hi float64) bool {
	c.t.Helper()
	return c.record(Record{Claim: c.id, What: what, Measured: measured, Lo: lo, Hi: hi, Case: kase, Pass: measured >= lo && measured <= hi})
}

func (c *Claim) record(r Record) bool {
	c.t.Helper()
	for _, v := range []*float64{&r.Truth, &r.Measured, &r.Lo, &r.Hi} {
		switch {
		case math.IsNaN(*v): // JSON has neither NaN nor Inf
			*v, r.Pass = 0, false
		case math.IsInf(*v, 0):
			*v = math.Copysign(math.MaxFloat64, *v)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		c.t.Fatalf("truth: %v", err)
	}
	c.t.Log(Line + string(b))
	if !r.Pass {
		c.t.Errorf("claim %s, %s (%s): measured %s, want %s", r.Claim, r.What, r.Case, fmtMeasured(r), fmtWindow(r))
	}
	return r.Pass
}

func fmtMeasured(r Record) string {
	if r.Truth == 0 {
		return fmt.Sprintf("%.4g", r.Measured)
	}
	return fmt.Sprintf("%.4g = %.4f × the truth %.4g", r.Measured, r.Measured/r.Truth, r.Truth)
}

func fmtWindow(r Record) string {
	if r.Truth == 0 {
		return fmt.Sprintf("%.4g … %.4g", r.Lo, r.Hi)
	}
	return fmt.Sprintf("%.4f … %.4f × the truth", r.Lo, r.Hi)
}
