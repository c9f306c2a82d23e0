package rig

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/internal/wait"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// JournalName is the journal's file name in a run's folder.
const JournalName = "journal.jsonl"

// RunFiles are the files a run writes into its folder.
var RunFiles = []string{JournalName, "results.json", "report.txt", "report.html"}

// Folder is a run's output folder with its journal open: one JSON line per
// finished trial (and interval), synced, so a crash or Ctrl-C loses nothing
// and a resume replays the finished trials instead of running them again.
type Folder struct {
	Dir     string
	j       *rfc2544.Journal
	replay  []rfc2544.TrialRecord
	started time.Time
	// intervals says whether intervals go into the journal: a version 1
	// journal continued stays version 1 (trial lines only).
	intervals bool
	answered  int // trials the last Run answered from the journal
}

// NewFolder creates the journal of a new run in dir with header h (h.Started
// zero: now). A journal already there is an *InputError naming --out.
func NewFolder(dir string, h rfc2544.JournalHeader) (*Folder, error) {
	if h.Started.IsZero() {
		h.Started = time.Now().UTC()
	}
	h.Journal = rfc2544.JournalVersion
	j, err := rfc2544.CreateJournal(filepath.Join(dir, JournalName), h)
	if errors.Is(err, os.ErrExist) {
		return nil, inputf("--out %s: already holds a run (%s); continue it with --resume %s, or choose another --out", dir, JournalName, dir)
	}
	if err != nil {
		return nil, err
	}
	return &Folder{Dir: dir, j: j, started: h.Started, intervals: true}, nil
}

// ResumeFolder continues the journal jc read from dir (rfc2544.ReadJournal):
// its trials are replayed, not run again.
func ResumeFolder(dir string, jc *rfc2544.JournalContents) (*Folder, error) {
	j, err := rfc2544.ReopenJournal(filepath.Join(dir, JournalName), jc.ValidLen)
	if err != nil {
		return nil, err
	}
	return &Folder{Dir: dir, j: j, replay: jc.Records, started: jc.Header.Started, intervals: jc.Header.Journal >= 2}, nil
}

// Replayed is how many finished trials the journal holds to replay.
func (f *Folder) Replayed() int { return len(f.replay) }

// Answered is how many trials the last Run answered from the journal.
func (f *Folder) Answered() int { return f.answered }

// Close closes the journal.
func (f *Folder) Close() error { return f.j.Close() }

// Events receives a run's trials and intervals as they happen, one call at a
// time. An error from Interval or TrialFinished stops the run (e.g. the
// consumer of a stream is gone).
type Events interface {
	TrialStarted(test rfc2544.Test, frameSize, step int, intendedPercent float64, spec trials.Spec)
	Interval(rec rfc2544.IntervalRecord) error
	// TrialFinished: fromJournal marks a trial replayed from the journal.
	TrialFinished(rec rfc2544.TrialRecord, fromJournal bool) error
}

// RunConfig is how Folder.Run runs.
type RunConfig struct {
	Plan   rfc2544.Plan
	Tester rfc2544.Tester
	DUT    rfc2544.DUTInfo
	// MaxBps is the rate cap (rfc2544.Runner), MaxBpsSource where it
	// came from.
	MaxBps       float64
	MaxBpsSource string
	Tool         string // the results' tool and version
	Transport    string // the results' transport when the tester does not say
	TransportWhy string // how the transport was chosen (Tester.Why)
	Ceilings     []trials.CalibrationPoint
	NoRest       bool   // no rest between trials (a simulator's are computed)
	Events       Events // may be nil
}

// Run runs the plan, journaling every trial run now. The results come back
// with the run's error (res.Error says it too), for WriteResults. kept
// reports a resume that failed before it got past the journal: res holds
// less than the folder's results of the interrupted run, so keep those.
func (f *Folder) Run(ctx context.Context, cfg RunConfig) (res *rfc2544.Results, kept bool, err error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	o := &observer{f: f, ev: cfg.Events, cancel: cancel}
	rt := &rfc2544.ReplayTester{Next: &intervalTester{next: cfg.Tester, on: o.interval}, Pending: f.replay}
	o.rt = rt
	runner := &rfc2544.Runner{
		Tester:       rt,
		Plan:         cfg.Plan,
		Observer:     o,
		MaxBps:       cfg.MaxBps,
		MaxBpsSource: cfg.MaxBpsSource,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if rt.Replaying() || cfg.NoRest {
				return nil // no rest between trials not run, or only computed
			}
			return wait.Sleep(ctx, d)
		},
	}
	res, err = runner.Run(runCtx)
	if o.err != nil {
		err = o.err
	}
	if res == nil {
		res = &rfc2544.Results{Schema: rfc2544.SchemaVersion, Plan: cfg.Plan}
	}
	res.Tool, res.Started = cfg.Tool, f.started
	if res.Tester.Transport == "" {
		res.Tester.Transport = cfg.Transport
	}
	res.Tester.TransportWhy = cfg.TransportWhy
	res.Tester.Host, res.Tester.Kernel = HostAndKernel()
	res.Tester.Calibration = append(res.Tester.Calibration, cfg.Ceilings...)
	res.DUT = cfg.DUT
	if err != nil {
		res.Error = err.Error()
		if ctx.Err() != nil {
			res.Error = "interrupted: " + res.Error
		}
	}
	f.answered = rt.Done
	kept = len(f.replay) > 0 && err != nil && rt.Done < len(f.replay)
	return res, kept, err
}

// WriteResults writes results.json, report.txt and report.html into dir,
// all or none: a reader never sees half a file, nor a results.json from
// another run than the reports beside it. atExit, when set, registers the
// removal of half-written files for a process ended at once
// (fileio.WriteFiles).
func WriteResults(dir string, res *rfc2544.Results, atExit func(func()) func()) error {
	w := func(write func(io.Writer, *rfc2544.Results) error) func(io.Writer) error {
		return func(out io.Writer) error { return write(out, res) }
	}
	return fileio.WriteFiles(dir, []fileio.File{
		{Name: "results.json", Write: w(reports.WriteJSON)},
		{Name: "report.txt", Write: w(reports.WriteTables)},
		{Name: "report.html", Write: w(reports.WriteHTML)},
	}, atExit)
}

// observer journals every trial run now (the replayed ones are in the
// journal already) and passes trials and intervals on to the events. A
// journal that cannot be written stops the run: its trials could not be
// resumed.
type observer struct {
	f      *Folder
	rt     *rfc2544.ReplayTester
	ev     Events
	cancel context.CancelCauseFunc

	// mu orders the journal's and the events' lines: intervals come from
	// the trial's sampler goroutine.
	mu   sync.Mutex
	err  error
	test rfc2544.Test // the running trial's test, size and step
	size int
	step int
}

var _ rfc2544.Observer = (*observer)(nil)

// fail stops the run on the first error.
func (o *observer) fail(err error) {
	if err != nil && o.err == nil {
		o.err = err
		o.cancel(err)
	}
}

func (o *observer) interval(iv trials.Interval) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := rfc2544.IntervalRecord{Event: rfc2544.EventInterval, Test: o.test, FrameSize: o.size, Step: o.step, Interval: iv}
	if o.err == nil && o.f.intervals {
		o.fail(o.f.j.Append(rec))
	}
	if o.ev != nil {
		o.fail(o.ev.Interval(rec))
	}
}

func (o *observer) TrialStarted(test rfc2544.Test, frameSize, step int, intendedPercent float64, spec trials.Spec) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.test, o.size, o.step = test, frameSize, step
	if o.ev != nil {
		o.ev.TrialStarted(test, frameSize, step, intendedPercent, spec)
	}
}

func (o *observer) TrialFinished(rec rfc2544.TrialRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fromJournal := false
	if o.err == nil {
		var err error
		fromJournal, err = o.rt.Record(o.f.j, rec)
		o.fail(err)
	}
	if o.ev != nil {
		o.fail(o.ev.TrialFinished(rec, fromJournal))
	}
}

// intervalTester gives every trial it runs an OnInterval that hands the
// intervals to on.
type intervalTester struct {
	next rfc2544.Tester
	on   func(trials.Interval)
}

func (t *intervalTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	if t.on != nil {
		spec.OnInterval = t.on
	}
	return t.next.Run(ctx, spec)
}
