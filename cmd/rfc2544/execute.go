package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/internal/wait"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// errInterrupted marks a run stopped by Ctrl-C or SIGTERM: exit code 130.
var errInterrupted = errors.New("interrupted")

// openedTester is what openTester returns.
type openedTester struct {
	tester rfc2544.Tester
	// dut describes the device under test for the results.
	dut rfc2544.DUTInfo
	// close releases the tester and removes a temporary lab; it reports
	// what it did on the log writer it was given.
	close func()
}

// execute runs a checked setup: opens the journal and the tester, runs the
// plan, writes the results and reports.
func execute(ctx context.Context, s *runSetup, stdout, stderr io.Writer) error {
	f := s.flags
	logw := stderr
	if f.quiet {
		logw = io.Discard
	}
	// The journal, before the first trial.
	var j *rfc2544.Journal
	var replay []rfc2544.TrialRecord
	started := time.Now().UTC()
	var err error
	if s.resume != nil {
		j, err = rfc2544.ReopenJournal(filepath.Join(s.out, journalName), s.resume.ValidLen)
		replay = s.resume.Records
		started = s.resume.Header.Started
	} else {
		j, err = rfc2544.CreateJournal(filepath.Join(s.out, journalName), rfc2544.JournalHeader{Journal: rfc2544.JournalVersion,
			Tool: toolVersion(), Started: started, Verb: s.verb, Args: s.args, Plan: s.plan})
		if errors.Is(err, os.ErrExist) {
			return usagef("--out %s: already holds a run (%s); continue it with --resume %s, or choose another --out", s.out, journalName, s.out)
		}
	}
	if err != nil {
		return err
	}
	defer j.Close()

	p := s.plan
	fmt.Fprintf(logw, "rfc2544 %s: profile %s, tests %s, frame sizes %s\n", s.verb, p.Profile, testsString(p.Tests), sizesString(p.FrameSizes))
	fmt.Fprintf(logw, "line rate %s, percentages refer to it; rate cap %s (%s)\n", lineRateNote(p.LinkBps, s.lineNote), formatBitRate(s.capBps), s.capNote)
	if s.resume != nil {
		fmt.Fprintf(logw, "resuming %s: %d finished trials in the journal are not repeated\n", s.out, len(replay))
	}
	fmt.Fprintf(logw, "output: %s\n", s.out)

	ot, err := openTester(ctx, s, logw)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w before the first trial: %v", errInterrupted, err)
		}
		return err
	}
	defer ot.close()

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var prog *progress
	if !f.quiet {
		prog = newProgress(stderr, p)
		if len(replay) == 0 {
			est, n := prog.plan.Estimate()
			fmt.Fprintf(stderr, "expected duration: about %v of tester time, %d trials (an estimate from the plan; searches depend on the DUT)\n", est.Round(time.Second), n)
		}
	}
	var js *jsonStream
	if f.jsonStream {
		js = &jsonStream{w: stdout}
		est, n := p.Estimate()
		if err := js.emit(startEvent{Event: eventStart, Time: time.Now().UTC(), Tool: toolVersion(), Out: s.out, Resumed: len(replay),
			EstimateS: est.Seconds(), Trials: n, Plan: p}); err != nil {
			return err
		}
	}
	obs := &runObserver{j: j, prog: prog, js: js, cancel: cancel,
		// A version 1 journal continued stays version 1: trial lines only.
		journalIntervals: s.resume == nil || s.resume.Header.Journal >= 2}
	rt := &rfc2544.ReplayTester{Next: &intervalTester{next: ot.tester, on: obs.interval}, Pending: replay}
	obs.rt = rt
	runner := &rfc2544.Runner{
		Tester:       rt,
		Plan:         p,
		Observer:     obs,
		MaxBps:       s.capBps,
		MaxBpsSource: s.capNote,
		Sleep: func(ctx context.Context, d time.Duration) error {
			if rt.Replaying() || s.transport == transportSim {
				// No rest between trials that are not run, or only computed.
				return nil
			}
			return wait.Sleep(ctx, d)
		},
	}
	res, runErr := runner.Run(runCtx)
	if prog != nil {
		prog.done()
	}
	if obs.err != nil {
		runErr = obs.err
	}
	if res == nil {
		res = &rfc2544.Results{Schema: rfc2544.SchemaVersion, Plan: p}
	}
	res.Tool = toolVersion()
	res.Started = started
	if res.Tester.Transport == "" {
		res.Tester.Transport = s.transport
	}
	res.Tester.Host, res.Tester.Kernel = hostAndKernel()
	res.Tester.Calibration = append(res.Tester.Calibration, s.ceilings...)
	res.DUT = ot.dut
	interrupted := runErr != nil && ctx.Err() != nil
	if runErr != nil {
		res.Error = runErr.Error()
		if interrupted {
			res.Error = "interrupted: " + res.Error
		}
	}

	if s.resume != nil && runErr != nil && rt.Done < len(replay) {
		// A resume that failed before it got past the journal has less
		// than the interrupted run's results: keep those.
		fmt.Fprintf(logw, "results.json and the reports in %s are left as they were: the resume stopped after %d of the journal's %d trials\n",
			s.out, rt.Done, len(replay))
		if interrupted {
			return fmt.Errorf("%w: continue with 'rfc2544 %s --resume %s'", errInterrupted, s.verb, s.out)
		}
		return fmt.Errorf("%w (results in %s unchanged)", runErr, s.out)
	}
	if err := writeResults(s.out, res); err != nil {
		return errors.Join(runErr, err)
	}
	if js != nil {
		if err := js.emit(endEvent{Event: eventEnd, Time: time.Now().UTC(), Error: res.Error, Results: res}); err != nil {
			return errors.Join(runErr, err)
		}
	} else if f.json {
		if err := reports.WriteJSON(stdout, res); err != nil {
			return errors.Join(runErr, fmt.Errorf("write results to stdout: %w", err))
		}
	} else if err := reports.WriteTables(stdout, res); err != nil {
		return errors.Join(runErr, fmt.Errorf("write tables: %w", err))
	}
	fmt.Fprintf(logw, "results: %s (journal %s)\n", filepath.Join(s.out, "results.json"), filepath.Join(s.out, journalName))

	switch {
	case interrupted:
		return fmt.Errorf("%w: partial results in %s; continue with 'rfc2544 %s --resume %s'", errInterrupted, s.out, s.verb, s.out)
	case runErr != nil:
		return fmt.Errorf("%w (partial results in %s)", runErr, s.out)
	case res.TesterLimited():
		return errTesterLimited
	}
	return nil
}

// runObserver journals every finished trial (not the replayed ones: they
// are in the journal already) and reports progress. A journal that cannot be
// written stops the run: its trials could not be resumed.
type runObserver struct {
	j      *rfc2544.Journal
	rt     *rfc2544.ReplayTester
	prog   *progress
	js     *jsonStream // --json-stream, or nil
	cancel context.CancelCauseFunc
	// journalIntervals says whether intervals go into the journal.
	journalIntervals bool

	// mu orders the journal's and the stream's lines: intervals come from
	// the trial's sampler goroutine.
	mu   sync.Mutex
	err  error
	test rfc2544.Test // the running trial's test, size and step
	size int
	step int
}

var _ rfc2544.Observer = (*runObserver)(nil)

// fail stops the run on the first error of the journal or the stream.
func (o *runObserver) fail(err error) {
	if err != nil && o.err == nil {
		o.err = err
		o.cancel(err)
	}
}

// interval journals and streams one interval of the running trial and
// shows it on the progress line.
func (o *runObserver) interval(iv trials.Interval) {
	o.mu.Lock()
	defer o.mu.Unlock()
	rec := rfc2544.IntervalRecord{Event: rfc2544.EventInterval, Test: o.test, FrameSize: o.size, Step: o.step, Interval: iv}
	if o.err == nil && o.journalIntervals {
		o.fail(o.j.Append(rec))
	}
	o.fail(o.js.emit(rec))
	if o.prog != nil {
		o.prog.interval(iv)
	}
}

func (o *runObserver) TrialStarted(test rfc2544.Test, frameSize, step int, intendedPercent float64, spec trials.Spec) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.test, o.size, o.step = test, frameSize, step
	if o.prog != nil {
		o.prog.TrialStarted(test, frameSize, step, intendedPercent, spec)
	}
}

func (o *runObserver) TrialFinished(rec rfc2544.TrialRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fromJournal := false
	if o.err == nil {
		var err error
		fromJournal, err = o.rt.Record(o.j, rec)
		o.fail(err)
		if o.prog != nil {
			o.prog.fromJournal = fromJournal
		}
	}
	o.fail(o.js.emit(trialEvent{Event: eventTrial, FromJournal: fromJournal, TrialRecord: rec}))
	if o.prog != nil {
		o.prog.TrialFinished(rec)
	}
}

// writeResults writes results.json, report.txt and report.html into dir,
// all or none (writeFilesAtomic): a reader never sees half a file, nor a
// results.json from another run than the reports beside it.
func writeResults(dir string, res *rfc2544.Results) error {
	w := func(write func(io.Writer, *rfc2544.Results) error) func(io.Writer) error {
		return func(out io.Writer) error { return write(out, res) }
	}
	return writeFilesAtomic(dir, []outputFile{
		{Name: "results.json", Write: w(reports.WriteJSON)},
		{Name: "report.txt", Write: w(reports.WriteTables)},
		{Name: "report.html", Write: w(reports.WriteHTML)},
	})
}

// toolVersion is "rfc2544" plus the module version or VCS revision.
func toolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "rfc2544"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v = s.Value[:12]
		}
	}
	if v == "" || v == "(devel)" {
		return "rfc2544 (devel)"
	}
	return "rfc2544 " + v
}

func testsString(ts []rfc2544.Test) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
}
