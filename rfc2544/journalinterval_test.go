package rfc2544

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// TestJournalIntervalLines: interval lines between trial lines are counted,
// not taken for trials; a version 1 journal reads; an unknown event is an
// error naming the line.
func TestJournalIntervalLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := CreateJournal(path, JournalHeader{Journal: JournalVersion, Tool: "test", Verb: "run"})
	if err != nil {
		t.Fatal(err)
	}
	iv := func(i int) IntervalRecord {
		return IntervalRecord{Event: EventInterval, Test: TestThroughput, FrameSize: 64, Step: 1,
			Interval: trials.Interval{Index: i, Offered: 10, Received: 9, Final: i == 1}}
	}
	for _, v := range []any{iv(0), iv(1), TrialRecord{Test: TestThroughput, FrameSize: 64, Step: 1, Sent: 20, Received: 18}, iv(0)} {
		if err := j.Append(v); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 1 || c.Records[0].Sent != 20 || c.Intervals != 3 {
		t.Errorf("read %d records (%+v), %d intervals; want 1 trial of 20 frames and 3 intervals", len(c.Records), c.Records, c.Intervals)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `{"event":"interval","test":"throughput","frame_size":64,"step":1,"index":1,`) {
		t.Errorf("interval line not as documented:\n%s", b)
	}

	v1 := filepath.Join(t.TempDir(), "v1.jsonl")
	os.WriteFile(v1, []byte(`{"journal":1,"tool":"t","started":"2026-01-01T00:00:00Z","verb":"run","args":null,"plan":{}}`+"\n"+
		`{"test":"throughput","frame_size":64,"step":1,"sent":5}`+"\n"), 0o644)
	if c, err := ReadJournal(v1); err != nil || len(c.Records) != 1 {
		t.Errorf("version 1 journal: %v, %d records", err, len(c.Records))
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(strings.SplitN(string(b), "\n", 2)[0]+"\n"+`{"event":"nonsense"}`+"\n"), 0o644)
	if _, err := ReadJournal(bad); err == nil || !strings.Contains(err.Error(), `line 2: unknown event "nonsense"`) {
		t.Errorf("unknown event: %v, want an error naming line 2", err)
	}
}
