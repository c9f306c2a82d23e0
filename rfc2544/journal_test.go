package rfc2544

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// TestJournalReplay: trials journaled by one run are answered from the
// journal by a ReplayTester, a half-written last line is dropped, and a
// trial that differs from the journaled one is an error.
func TestJournalReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	p := testPlan([]Test{TestThroughput}, 64)
	j, err := CreateJournal(path, JournalHeader{Journal: JournalVersion, Tool: "test", Verb: "run", Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	spec := trials.Spec{FrameSize: 64, RateFPS: 1000}
	for i := range 2 {
		if err := j.Append(TrialRecord{Test: TestThroughput, FrameSize: 64, Step: i + 1, Result: trials.Result{Spec: spec, TesterLimitReason: "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	if _, err := CreateJournal(path, JournalHeader{Journal: JournalVersion}); !errors.Is(err, os.ErrExist) {
		t.Errorf("second journal at the same path: %v, want os.ErrExist", err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"test":"throughput","frame_si`) // a crash mid-write
	f.Close()
	c, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 2 || c.Header.Verb != "run" || c.Header.Plan.LinkBps != p.LinkBps {
		t.Fatalf("read back %d records, header %+v", len(c.Records), c.Header)
	}
	sim := &SimDUT{LinkBps: testLink}
	rt := &ReplayTester{Next: sim, Pending: c.Records}
	if res, err := rt.Run(context.Background(), spec); err != nil || res.TesterLimitReason != "x" || !rt.Replaying() {
		t.Errorf("first replayed trial: %+v, %v", res, err)
	}
	other := spec
	other.RateFPS = 2000
	if _, err := rt.Run(context.Background(), other); err == nil || !strings.Contains(err.Error(), "trial 2 of the journal") {
		t.Errorf("a different trial: %v, want a mismatch naming trial 2", err)
	}
	if sim.Trials() != 0 || rt.Done != 1 {
		t.Errorf("simulator ran %d trials, %d replayed; want 0 and 1", sim.Trials(), rt.Done)
	}
	// Record: the replayed trial is the journal's already; a trial that
	// ended in an error is not journaled, one that finished is.
	j, err = ReopenJournal(path, c.ValidLen)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if from, err := rt.Record(j, c.Records[0]); !from || err != nil {
		t.Errorf("Record of the replayed trial: from the journal %v, %v", from, err)
	}
	if from, err := rt.Record(j, TrialRecord{Test: TestThroughput, Step: 2}); from || err != nil {
		t.Errorf("Record after a failed trial: from the journal %v, %v", from, err)
	}
	rt.LastErr = nil
	if _, err := rt.Record(j, TrialRecord{Test: TestThroughput, Step: 3}); err != nil {
		t.Fatal(err)
	}
	if c, err := ReadJournal(path); err != nil || len(c.Records) != 3 || c.Records[2].Step != 3 {
		t.Errorf("journal after Record: %v, %+v; want the two trials and step 3", err, c)
	}
	if _, err := ReadJournal(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing journal: %v, want os.ErrNotExist", err)
	}
}
