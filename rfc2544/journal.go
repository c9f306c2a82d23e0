package rfc2544

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/trials"
)

// JournalVersion is the layout of the journal: 2 adds interval lines
// (IntervalRecord, progress of a running trial) between the trial lines; a
// version 1 journal has trial lines only and reads the same.
const JournalVersion = 2

// MaxJournalBytes bounds a journal read back by ReadJournal.
const MaxJournalBytes = 256 << 20

// JournalHeader is a journal's first line: what is needed to continue the
// run with exactly the same plan and ports. Every later line is one
// finished trial, a TrialRecord, or (version 2) an IntervalRecord.
type JournalHeader struct {
	// Journal is JournalVersion.
	Journal int `json:"journal"`
	// Tool wrote the journal.
	Tool    string    `json:"tool"`
	Started time.Time `json:"started"`
	// Verb and Args are the command line of the run, for a resumed run to
	// parse again for its ports (the CLI leaves out --out and --resume).
	Verb string   `json:"verb"`
	Args []string `json:"args"`
	// Plan is the effective plan: a resumed run uses it as is, even when
	// the plan file it came from has changed since.
	Plan Plan `json:"plan"`
	// Transport is the transport the run chose (its --transport, or what
	// auto chose): a resumed run keeps it. Empty in older journals.
	Transport string `json:"transport,omitempty"`
}

// Journal appends finished trials to a journal file, one JSON line each,
// synced to disk before the next trial starts: a crash loses nothing that
// finished. ReadJournal reads it back, and a ReplayTester continues the run.
type Journal struct {
	f    *os.File
	path string
}

// CreateJournal starts a new journal at path with its header line. A file
// already there is an error wrapping os.ErrExist.
func CreateJournal(path string, h JournalHeader) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create journal: %w", err)
	}
	j := &Journal{f: f, path: path}
	if err := j.Append(h); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// ReopenJournal opens an existing journal for appending after its first
// validLen bytes (JournalContents.ValidLen), truncating a last line that a
// crash left half written.
func ReopenJournal(path string, validLen int64) (*Journal, error) {
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
	return &Journal{f: f, path: path}, nil
}

// Append writes v (a TrialRecord, or the header) as one line and syncs it.
func (j *Journal) Append(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "A->B", as results.json writes it
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode journal line: %w", err)
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync journal %s: %w", j.path, err)
	}
	return nil
}

// Close closes the journal file.
func (j *Journal) Close() error { return j.f.Close() }

// JournalContents is a journal as read back.
type JournalContents struct {
	Header  JournalHeader
	Records []TrialRecord
	// Intervals counts the interval lines (progress of running trials,
	// not needed to continue the run).
	Intervals int
	// ValidLen is the length in bytes of the complete lines.
	ValidLen int64
}

// ReadJournal reads a journal (a regular file of at most MaxJournalBytes).
// A last line without its newline is what a crash mid-write leaves: it is
// dropped (that trial runs again). Any other bad line is an error. A
// missing file is an error wrapping os.ErrNotExist.
func ReadJournal(path string) (*JournalContents, error) {
	b, err := fileio.ReadBounded(path, MaxJournalBytes)
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", path, err)
	}
	var c JournalContents
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
			if c.Header.Journal > JournalVersion {
				return nil, fmt.Errorf("journal %s: version %d is newer than this program's %d; resume it with a newer rfc2544", path, c.Header.Journal, JournalVersion)
			}
			// Its plan's custom mixes name the sizes of the records.
			hp := c.Header.Plan
			err := hp.RegisterMixes()
			if err == nil {
				err = hp.checkMixSizes("frame_sizes", hp.FrameSizes)
			}
			if err != nil {
				return nil, fmt.Errorf("journal %s line 1: %w", path, err)
			}
		} else {
			var ev struct {
				Event string `json:"event"`
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				return nil, fmt.Errorf("journal %s line %d: %w; the journal is damaged, start a new run", path, n, err)
			}
			switch ev.Event {
			case "":
				var rec TrialRecord
				if err := json.Unmarshal(line, &rec); err != nil {
					return nil, fmt.Errorf("journal %s line %d: %w; the journal is damaged, start a new run", path, n, err)
				}
				c.Records = append(c.Records, rec)
			case EventInterval:
				c.Intervals++
			default:
				return nil, fmt.Errorf("journal %s line %d: unknown event %q; resume it with a newer rfc2544", path, n, ev.Event)
			}
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

// ReplayTester continues an interrupted run: it answers the first trials
// from the journal (Pending), in order, and runs the rest on Next. Because
// every procedure decides its next trial only from earlier results, a resumed
// run asks for the same trials in the same order; each request is checked
// against the journaled trial and a mismatch is an error, never a silent mix
// of two different runs.
type ReplayTester struct {
	Next    Tester
	Pending []TrialRecord
	// Done counts the trials answered from the journal.
	Done int
	// LastErr is the error of the latest Run: a trial that ended in an
	// error (e.g. cancelled) is not to be journaled as finished.
	LastErr error

	recorded int // trials from the journal that Record has seen
}

var _ Tester = (*ReplayTester)(nil)

// Run replays the next journaled trial, or runs spec for real once the
// journal is used up.
func (r *ReplayTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if len(r.Pending) > 0 {
		rec := r.Pending[0]
		if err := sameSpec(rec.Result.Spec, spec); err != nil {
			r.LastErr = fmt.Errorf("resume: trial %d of the journal (%s, %d bytes, step %d) %w; "+
				"the journal was written by a different plan or version: start a new run with another --out",
				r.Done+1, rec.Test, rec.FrameSize, rec.Step, err)
			return trials.Result{Spec: spec}, r.LastErr
		}
		r.Pending = r.Pending[1:]
		r.Done++
		r.LastErr = nil
		return rec.Result, nil
	}
	res, err := r.Next.Run(ctx, spec)
	r.LastErr = err
	return res, err
}

// Record journals rec, a trial the Observer heard finish (TrialFinished),
// unless it is one Run answered from the journal, which it already holds:
// fromJournal says which. A trial whose Run ended in an error is not
// journaled (it did not finish), except a path probe the tester refused as
// above the port's MTU, which the Runner records as finished. Call it once
// per finished trial, in order.
func (r *ReplayTester) Record(j *Journal, rec TrialRecord) (fromJournal bool, err error) {
	if r.recorded < r.Done {
		r.recorded++
		return true, nil
	}
	if r.LastErr != nil && !(rec.Test == TestProbe && errors.Is(r.LastErr, framing.ErrAboveMTU)) {
		return false, nil
	}
	return false, j.Append(rec)
}

// Replaying reports whether the next trial comes from the journal.
func (r *ReplayTester) Replaying() bool { return len(r.Pending) > 0 }

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
