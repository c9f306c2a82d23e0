package truth

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// fakeTB records what a claim does to its test.
type fakeTB struct {
	testing.TB
	logs    []string
	errs    []string
	skipped string
}

func (f *fakeTB) Helper()                   {}
func (f *fakeTB) Log(args ...any)           { f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(s string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Fatalf(s string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(s, a...)) }
func (f *fakeTB) Skipf(s string, a ...any)  { f.skipped = fmt.Sprintf(s, a...) }

// TestClaimSkipsOutsideCampaign: without RFC2544_TRUTH=1 a claim's test
// skips with the reason CI allows.
func TestClaimSkipsOutsideCampaign(t *testing.T) {
	t.Setenv(Env, "")
	f := &fakeTB{}
	New(f, "ndr")
	if !strings.HasPrefix(f.skipped, SkipPrefix+" ndr:") {
		t.Errorf("skip reason %q, want it to start with %q", f.skipped, SkipPrefix+" ndr:")
	}
}

// TestRecords: each check logs one TRUTH record the campaign reads, and
// fails the test exactly when the measurement is outside its window.
func TestRecords(t *testing.T) {
	t.Setenv(Env, "1")
	for _, c := range []struct {
		name                    string
		check                   func(*Claim) bool
		truth, measured, lo, hi float64
		pass                    bool
	}{
		{"ratio in", func(c *Claim) bool { return c.Ratio("ndr/R", "64 B", 100, 99.5, 0.98, 1.01) }, 100, 99.5, 0.98, 1.01, true},
		{"ratio low", func(c *Claim) bool { return c.Ratio("ndr/R", "64 B", 100, 97, 0.98, 1.01) }, 100, 97, 0.98, 1.01, false},
		{"ratio high", func(c *Claim) bool { return c.Ratio("ndr/R", "64 B", 100, 101.5, 0.98, 1.01) }, 100, 101.5, 0.98, 1.01, false},
		{"within", func(c *Claim) bool { return c.Within("excess ms", "D 2 ms", 0.2, 0, 0.3) }, 0, 0.2, 0, 0.3, true},
		{"within out", func(c *Claim) bool { return c.Within("excess ms", "D 2 ms", 0.4, 0, 0.3) }, 0, 0.4, 0, 0.3, false},
	} {
		f := &fakeTB{}
		cl := New(f, "x")
		if f.skipped != "" {
			t.Fatalf("%s: skipped in the campaign: %s", c.name, f.skipped)
		}
		if got := c.check(cl); got != c.pass || (len(f.errs) == 0) != c.pass {
			t.Errorf("%s: returned %v with errors %q, want pass %v", c.name, got, f.errs, c.pass)
		}
		if len(f.logs) != 1 || !strings.HasPrefix(f.logs[0], Line) {
			t.Fatalf("%s: logs %q, want one %q line", c.name, f.logs, Line)
		}
		var r Record
		if err := json.Unmarshal([]byte(strings.TrimPrefix(f.logs[0], Line)), &r); err != nil {
			t.Fatal(err)
		}
		want := Record{Claim: "x", What: r.What, Truth: c.truth, Measured: c.measured, Lo: c.lo, Hi: c.hi, Pass: c.pass, Case: r.Case}
		if r != want || r.What == "" || r.Case == "" {
			t.Errorf("%s: record %+v, want %+v", c.name, r, want)
		}
	}
}
