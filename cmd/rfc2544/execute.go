package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/atexit"
	"github.com/rfc2544/rfc2544/internal/version"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// errInterrupted marks a run stopped by Ctrl-C or SIGTERM: exit code 130.
var errInterrupted = errors.New("interrupted")

// openedTester is what openTester returns.
type openedTester struct {
	tester rfc2544.Tester
	// dut describes the device under test for the results.
	dut rfc2544.DUTInfo
	// transport runs the trials (rig.Tester.Transport; "": the setup's),
	// why says how it was chosen.
	transport, why string
	// close releases the tester and removes a temporary lab; it reports
	// what it did on the log writer it was given.
	close func()
}

// execute runs a checked setup: opens the journal (rig.Folder) and the
// tester, runs the plan, writes the results and reports.
func execute(ctx context.Context, s *runSetup, stdout, stderr io.Writer) error {
	f := s.flags
	logw := stderr
	if f.quiet {
		logw = io.Discard
	}
	// The journal, before the first trial.
	var folder *rig.Folder
	var err error
	if s.resume != nil {
		folder, err = rig.ResumeFolder(s.out, s.resume)
	} else {
		folder, err = rig.NewFolder(s.out, rfc2544.JournalHeader{Tool: version.Tool(), Verb: s.verb, Args: s.args, Plan: s.plan, Transport: s.transport})
	}
	if err != nil {
		return err
	}
	defer folder.Close()
	replayed := folder.Replayed()

	p := s.plan
	fmt.Fprintf(logw, "rfc2544 %s: profile %s, tests %s, frame sizes %s\n", s.verb, p.Profile, testsString(p.Tests), sizesString(p.FrameSizes))
	fmt.Fprintf(logw, "line rate %s, percentages refer to it; rate cap %s (%s)\n", lineRateNote(p.LinkBps, s.lineNote), formatBitRate(s.capBps), s.capNote)
	if s.resume != nil {
		fmt.Fprintf(logw, "resuming %s: %d finished trials in the journal are not repeated\n", s.out, replayed)
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

	ev := &runEvents{}
	if !f.quiet {
		ev.prog = newProgress(stderr, p)
		if replayed == 0 {
			est, n := ev.prog.plan.Estimate()
			fmt.Fprintf(stderr, "expected duration: about %v of tester time, %d trials (an estimate from the plan; searches depend on the DUT)\n", est.Round(time.Second), n)
		}
	}
	if f.jsonStream {
		ev.js = &jsonStream{w: stdout}
		est, n := p.Estimate()
		if err := ev.js.emit(rfc2544.StartEvent{Event: rfc2544.EventStart, Time: time.Now().UTC(), Tool: version.Tool(), Out: s.out, Resumed: replayed,
			EstimateS: est.Seconds(), Trials: n, Plan: p, Transport: cmp.Or(ot.transport, s.transport), TransportWhy: cmp.Or(ot.why, s.why)}); err != nil {
			return err
		}
	}
	res, kept, runErr := folder.Run(ctx, rig.RunConfig{Plan: p, Tester: ot.tester, DUT: ot.dut, MaxBps: s.capBps, MaxBpsSource: s.capNote,
		Tool: version.Tool(), Transport: cmp.Or(ot.transport, s.transport), TransportWhy: cmp.Or(ot.why, s.why), Ceilings: s.ceilings, NoRest: s.transport == transportSim, Events: ev})
	if ev.prog != nil {
		ev.prog.done()
	}
	interrupted := runErr != nil && ctx.Err() != nil
	if kept {
		// A resume that failed before it got past the journal has less
		// than the interrupted run's results: they are kept.
		fmt.Fprintf(logw, "results.json and the reports in %s are left as they were: the resume stopped after %d of the journal's %d trials\n",
			s.out, folder.Answered(), replayed)
		if interrupted {
			return fmt.Errorf("%w: continue with 'rfc2544 %s --resume %s'", errInterrupted, s.verb, s.out)
		}
		return fmt.Errorf("%w (results in %s unchanged)", runErr, s.out)
	}
	if err := rig.WriteResults(s.out, res, atexit.Register); err != nil {
		return errors.Join(runErr, err)
	}
	if ev.js != nil {
		if err := ev.js.emit(rfc2544.EndEvent{Event: rfc2544.EventEnd, Time: time.Now().UTC(), Error: res.Error, Results: res}); err != nil {
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

// runEvents shows a run's trials on the progress line (or log) and on the
// --json-stream; either may be nil.
type runEvents struct {
	prog *progress
	js   *jsonStream
}

var _ rig.Events = (*runEvents)(nil)

func (e *runEvents) TrialStarted(test rfc2544.Test, frameSize, step int, intendedPercent float64, spec trials.Spec) {
	if e.prog != nil {
		e.prog.TrialStarted(test, frameSize, step, intendedPercent, spec)
	}
}

func (e *runEvents) Interval(rec rfc2544.IntervalRecord) error {
	if e.prog != nil {
		e.prog.interval(rec.Interval)
	}
	return e.js.emit(rec)
}

func (e *runEvents) TrialFinished(rec rfc2544.TrialRecord, fromJournal bool) error {
	err := e.js.emit(rfc2544.TrialEvent{Event: rfc2544.EventTrial, FromJournal: fromJournal, TrialRecord: rec})
	if e.prog != nil {
		e.prog.fromJournal = fromJournal
		e.prog.TrialFinished(rec)
	}
	return err
}

func testsString(ts []rfc2544.Test) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ",")
}
