package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// progress reports a run as it goes, on stderr: on a terminal one live line
// per test (rewritten in place) with the frame size, step, intended load,
// last loss, elapsed time and an ETA; otherwise one log line per finished
// trial. The ETA is an estimate from the plan: a search's length depends on
// the DUT.
type progress struct {
	w     io.Writer
	tty   bool
	now   func() time.Time
	start time.Time

	plan rfc2544.Plan
	left *rfc2544.ETA

	test      rfc2544.Test
	size      int
	step      int
	intended  float64
	lastLoss  string
	live      string // the running trial's latest interval: "  trial 12s loss 0.000%"
	lineShown bool
	// fromJournal marks the trial being reported as replayed from the
	// journal of a resumed run, not run now.
	fromJournal bool
}

func newProgress(w io.Writer, plan rfc2544.Plan) *progress {
	p := &progress{w: w, tty: isTerminal(w), now: time.Now, plan: plan, left: rfc2544.NewETA(plan)}
	p.start = p.now()
	return p
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// TrialStarted implements rfc2544.Observer.
func (p *progress) TrialStarted(test rfc2544.Test, frameSize, step int, intendedPercent float64, _ trials.Spec) {
	if test != p.test || frameSize != p.size {
		p.advance(test, frameSize)
	}
	p.left.TrialStarted(test, frameSize)
	p.step, p.intended, p.live = step, intendedPercent, ""
	if p.tty {
		p.draw()
	}
}

// advance moves to test at size: a terminal keeps the finished test's line.
func (p *progress) advance(test rfc2544.Test, size int) {
	if p.tty && p.lineShown && test != p.test {
		fmt.Fprintln(p.w)
		p.lineShown = false
	}
	p.test, p.size, p.lastLoss = test, size, ""
}

// TrialFinished implements rfc2544.Observer.
func (p *progress) TrialFinished(rec rfc2544.TrialRecord) {
	p.lastLoss = fmt.Sprintf("%.3f%%", rec.LossPercent)
	p.live = ""
	if p.tty {
		p.draw()
		return
	}
	var what string
	switch {
	case rec.BurstFrames > 0:
		what = fmt.Sprintf("burst %d frames", rec.BurstFrames)
	default:
		what = fmt.Sprintf("intended %.2f%% offered %.2f%%", rec.IntendedPercent, rec.OfferedPercent)
	}
	outcome := string(rec.Outcome)
	if rec.TesterLimitReason != "" {
		outcome += " (" + rec.TesterLimitReason + ")"
	}
	if rec.Discarded {
		outcome += ", a stall of this host: running the trial again"
	}
	when := p.elapsed() + " elapsed"
	if p.fromJournal {
		when = "from the journal"
	}
	size := framing.SizeName(rec.FrameSize)
	if !framing.IsMix(rec.FrameSize) {
		size += "B"
	}
	fmt.Fprintf(p.w, "%s %s step %d: %s, sent %d, loss %.3f%%, latency avg %s: %s [%s]\n",
		testLabel(rec.Test), size, rec.Step, what, rec.Sent, rec.LossPercent,
		fmtNs(rec.LatencyAvgNs), outcome, when)
}

// interval shows a running trial's latest interval on the live line
// (a terminal only: a log gets one line per trial).
func (p *progress) interval(iv trials.Interval) {
	if iv.Final || !p.tty {
		return
	}
	p.live = fmt.Sprintf("  trial %s loss %.3f%%", time.Duration(iv.EndNs).Round(time.Second), iv.LossSoFarPercent)
	if iv.Partial { // a two-host trial: its loss is known at its end
		p.live = fmt.Sprintf("  trial %s sent %d received %d here", time.Duration(iv.EndNs).Round(time.Second), iv.SentSoFar, iv.ReceivedSoFar)
	}
	p.draw()
}

// draw rewrites the live line.
func (p *progress) draw() {
	line := fmt.Sprintf("%-10s %5dB  step %-3d load %7.3f%%  last loss %-8s  elapsed %s  ETA %s%s",
		testLabel(p.test), p.size, p.step, p.intended, orDash(p.lastLoss), p.elapsed(), p.eta(), p.live)
	if f, ok := p.w.(*os.File); ok {
		// A line wider than the terminal wraps, and \r then rewrites only
		// its last row: cut it to the width.
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 1 && len(line) >= w {
			line = line[:w-1]
		}
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.lineShown = true
}

// done ends the live line.
func (p *progress) done() {
	if p.tty && p.lineShown {
		fmt.Fprintln(p.w)
		p.lineShown = false
	}
}

func (p *progress) elapsed() string {
	return p.now().Sub(p.start).Round(time.Second).String()
}

// eta is the estimated time left (rfc2544.ETA).
func (p *progress) eta() string { return "~" + p.left.Left().Round(time.Second).String() }

func testLabel(t rfc2544.Test) string {
	switch t {
	case rfc2544.TestFrameLoss:
		return "loss"
	case rfc2544.TestBackToBack:
		return "b2b"
	case rfc2544.TestRecovery:
		return "recovery"
	}
	return string(t)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtNs(ns float64) string {
	if ns <= 0 {
		return "-"
	}
	return time.Duration(ns).Round(time.Microsecond / 10).String()
}

// lineRateNote formats the line rate for the run's header.
func lineRateNote(bps float64, note string) string {
	s := formatBitRate(bps)
	if note != "" {
		s += " (" + note + ")"
	}
	return s
}
