package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

func TestComparisonOnlyTest(t *testing.T) {
	c := Compare(loadFixture(t, fixture1500), loadFixture(t, fixture9000))
	sub, ok := c.OnlyTest(rfc2544.TestLatency)
	if !ok || len(sub.Rows) == 0 || len(sub.Rows) >= len(c.Rows) {
		t.Fatalf("OnlyTest(latency): ok %v, %d of %d rows", ok, len(sub.Rows), len(c.Rows))
	}
	for _, r := range sub.Rows {
		if r.Test != rfc2544.TestLatency {
			t.Errorf("OnlyTest(latency) kept a %s row", r.Test)
		}
	}
	for _, n := range sub.Notes {
		if strings.Contains(n, ": only in ") && !strings.HasPrefix(n, "latency:") {
			t.Errorf("OnlyTest(latency) kept another test's note %q", n)
		}
	}
	none := c
	none.Rows = nil
	if _, ok := none.OnlyTest(rfc2544.TestLatency); ok {
		t.Error("OnlyTest of a comparison without latency rows: ok, want not")
	}
	var b bytes.Buffer
	c.A.Label = "A->B"
	if err := WriteComparisonJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"label": "A->B"`) {
		t.Errorf("WriteComparisonJSON escaped the label or dropped it: %.300s", b.String())
	}
	var back Comparison
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != len(c.Rows) {
		t.Errorf("WriteComparisonJSON does not read back: %v, %d rows of %d", err, len(back.Rows), len(c.Rows))
	}
}
