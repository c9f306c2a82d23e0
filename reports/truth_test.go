package reports

import (
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestLabTruthColumns: a results file whose DUT has a lab truth prints it
// beside the throughput (with found / truth) and the back-to-back bursts;
// sizes without a truth point get a dash, and a results file without one
// gets no such column.
func TestLabTruthColumns(t *testing.T) {
	res, err := ReadResultsFile(fixturePath("1500"))
	if err != nil {
		t.Fatal(err)
	}
	var plain strings.Builder
	if err := WriteTables(&plain, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Lab truth") || strings.Contains(plain.String(), "Lab model") {
		t.Fatalf("no truth, yet a truth column:\n%s", plain.String())
	}
	if len(res.Throughput) < 2 || len(res.BackToBack) == 0 {
		t.Fatalf("fixture has %d throughput and %d back-to-back results", len(res.Throughput), len(res.BackToBack))
	}
	tp := res.Throughput[0]
	res.DUT.Truth = []rfc2544.TruthPoint{{FrameSize: tp.FrameSize, ThroughputFPS: tp.FPS / 0.998, BackToBackFrames: 1234.4}}
	if res.BackToBack[0].FrameSize != tp.FrameSize {
		res.DUT.Truth = append(res.DUT.Truth, rfc2544.TruthPoint{FrameSize: res.BackToBack[0].FrameSize, ThroughputFPS: 1, BackToBackFrames: 1234.4})
	}
	var b strings.Builder
	if err := WriteTablesWide(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Lab truth (fps)", "Found / truth", fps(tp.FPS / 0.998), "0.9980", "Lab model (frames)", "1,234", "Lab truth: the rate the lab's DUT is set to forward", "Lab model: the longest burst"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
