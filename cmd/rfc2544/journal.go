package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// journalName is the journal's file name in the output folder.
const journalName = "journal.jsonl"

// journalVersion is the layout of the journal's header line.
const journalVersion = 1

// journalHeader is the journal's first line: what is needed to continue the
// run (--resume) with exactly the same plan and ports. Every later line is
// one finished trial, an rfc2544.TrialRecord.
type journalHeader struct {
	// Journal is journalVersion.
	Journal int `json:"journal"`
	// Tool wrote the journal.
	Tool    string    `json:"tool"`
	Started time.Time `json:"started"`
	// Verb and Args are the command line of the run (without --out and
	// --resume); a resumed run parses them again for its ports.
	Verb string   `json:"verb"`
	Args []string `json:"args"`
	// Plan is the effective plan: a resumed run uses it as is, even when
	// the plan file it came from has changed since.
	Plan rfc2544.Plan `json:"plan"`
}

// journal appends finished trials to journal.jsonl, one JSON line each,
// synced to disk before the next trial starts: a crash loses nothing that
// finished.
type journal struct {
	f    *os.File
	path string
}

// createJournal starts a new journal in dir, which must not hold one.
func createJournal(dir string, h journalHeader) (*journal, error) {
	path := filepath.Join(dir, journalName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, usagef("--out %s: already holds a run (%s); continue it with --resume %s, or choose another --out", dir, journalName, dir)
		}
		return nil, fmt.Errorf("create journal: %w", err)
	}
	j := &journal{f: f, path: path}
	if err := j.append(h); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// reopenJournal opens an existing journal for appending. It truncates a
// last line that a crash left half written.
func reopenJournal(path string, validLen int64) (*journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	if err := f.Truncate(validLen); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate journal's unfinished last line: %w", err)
	}
	if _, err := f.Seek(validLen, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek journal: %w", err)
	}
	return &journal{f: f, path: path}, nil
}

// append writes v as one line and syncs it.
func (j *journal) append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode journal line: %w", err)
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("write journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync journal %s: %w", j.path, err)
	}
	return nil
}

func (j *journal) Close() error { return j.f.Close() }

// journalContents is a journal as read back.
type journalContents struct {
	Header  journalHeader
	Records []rfc2544.TrialRecord
	// ValidLen is the length in bytes of the complete lines.
	ValidLen int64
}

// readJournal reads a journal. A last line without its newline is what a
// crash mid-write leaves: it is dropped (that trial runs again). Any other
// bad line is an error.
func readJournal(path string) (*journalContents, error) {
	b, err := fileio.ReadBounded(path, maxJournalBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usagef("--resume %s: no %s there; give the --out folder of the run to continue", filepath.Dir(path), journalName)
		}
		return nil, fmt.Errorf("read journal %s: %w", path, err)
	}
	var c journalContents
	r := bufio.NewReader(bytes.NewReader(b))
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a half-written last line (or none) is dropped
		}
		if n == 1 {
			if err := strictUnmarshal(line, &c.Header); err != nil || c.Header.Journal == 0 {
				return nil, fmt.Errorf("journal %s line 1: not an rfc2544 journal header (%v)", path, err)
			}
			if c.Header.Journal > journalVersion {
				return nil, fmt.Errorf("journal %s: version %d is newer than this program's %d; resume it with a newer rfc2544", path, c.Header.Journal, journalVersion)
			}
		} else {
			var rec rfc2544.TrialRecord
			if err := json.Unmarshal(line, &rec); err != nil {
				return nil, fmt.Errorf("journal %s line %d: %w; the journal is damaged, start a new run", path, n, err)
			}
			c.Records = append(c.Records, rec)
		}
		c.ValidLen += int64(len(line))
	}
	if c.ValidLen == 0 {
		return nil, fmt.Errorf("journal %s is empty: the run stopped before its first trial; start it again without --resume", path)
	}
	return &c, nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// replayTester continues an interrupted run: it answers the first trials
// from the journal, in order, and runs the rest on the real tester. Because
// every procedure decides its next trial only from earlier results, a resumed
// run asks for the same trials in the same order; each request is checked
// against the journaled trial and a mismatch is an error, never a silent mix
// of two different runs.
type replayTester struct {
	next    rfc2544.Tester
	pending []rfc2544.TrialRecord
	done    int // trials answered from the journal

	// lastErr is the error of the latest Run: a trial that ended in an
	// error (e.g. cancelled) is not journaled as finished.
	lastErr error
}

var _ rfc2544.Tester = (*replayTester)(nil)

// Run replays the next journaled trial, or runs spec for real once the
// journal is used up.
func (r *replayTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if len(r.pending) > 0 {
		rec := r.pending[0]
		if err := sameSpec(rec.Result.Spec, spec); err != nil {
			r.lastErr = fmt.Errorf("resume: trial %d of the journal (%s, %d bytes, step %d) %w; "+
				"the journal was written by a different plan or version: start a new run with another --out",
				r.done+1, rec.Test, rec.FrameSize, rec.Step, err)
			return trials.Result{Spec: spec}, r.lastErr
		}
		r.pending = r.pending[1:]
		r.done++
		r.lastErr = nil
		return rec.Result, nil
	}
	res, err := r.next.Run(ctx, spec)
	r.lastErr = err
	return res, err
}

// replaying reports whether the next trial comes from the journal.
func (r *replayTester) replaying() bool { return len(r.pending) > 0 }

// sameSpec compares two trial specs by their JSON form, the form the
// journal keeps.
func sameSpec(journaled, asked trials.Spec) error {
	a, err := json.Marshal(journaled)
	if err != nil {
		return err
	}
	b, err := json.Marshal(asked)
	if err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		return fmt.Errorf("was %s but the run now asks for %s", a, b)
	}
	return nil
}
