package rfc2544

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

const testLink = 1e9 // 1 Gbit/s ports in every test

// testPlan is a quick plan on a 1 Gbit/s link with the given tests and sizes.
func testPlan(tests []Test, sizes ...int) Plan {
	p, err := DefaultPlan(ProfileQuick)
	if err != nil {
		panic(err)
	}
	p.LinkBps = testLink
	if tests != nil {
		p.Tests = tests
	}
	if len(sizes) > 0 {
		p.FrameSizes = sizes
	}
	return p
}

// noSleep makes rests free in tests and records them.
func noSleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

// failTester fails the test if any trial is run.
type failTester struct{ t *testing.T }

func (f failTester) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	f.t.Fatalf("a trial ran (%+v); the plan should have been refused first", s)
	return trials.Result{}, nil
}

// recorder is an Observer that keeps what it hears.
type recorder struct {
	started  int
	tests    []Test // the test of every trial started
	finished []TrialRecord
	onStart  func(n int)
}

func (r *recorder) TrialStarted(test Test, frameSize, step int, pct float64, spec trials.Spec) {
	r.started++
	r.tests = append(r.tests, test)
	if r.onStart != nil {
		r.onStart(r.started)
	}
}
func (r *recorder) TrialFinished(rec TrialRecord) { r.finished = append(r.finished, rec) }

// logTable writes a search log as a markdown table, the table commercial
// testers print.
func logTable(recs []TrialRecord) string {
	var b strings.Builder
	b.WriteString("| step | rep | intended % | offered % | burst | sent | received | loss % | lat min µs | lat avg µs | lat max µs | outcome |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range recs {
		burst := ""
		if r.BurstFrames > 0 {
			burst = fmt.Sprint(r.BurstFrames)
		}
		rep := ""
		if r.Repetition > 0 {
			rep = fmt.Sprint(r.Repetition)
		}
		fmt.Fprintf(&b, "| %d | %s | %.3f | %.3f | %s | %d | %d | %.4f | %.2f | %.2f | %.2f | %s |\n",
			r.Step, rep, r.IntendedPercent, r.OfferedPercent, burst, r.Sent, r.Received, r.LossPercent,
			float64(r.LatencyMinNs)/1e3, r.LatencyAvgNs/1e3, float64(r.LatencyMaxNs)/1e3, r.Outcome)
	}
	return b.String()
}

// lossyStream wraps a Tester and makes one stream lose a frame per trial.
type lossyStream struct {
	inner Tester
	id    uint16
}

func (l lossyStream) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	res, err := l.inner.Run(ctx, s)
	for i := range res.Streams {
		if st := &res.Streams[i]; st.ID == l.id && st.Received > 0 {
			st.Received--
			st.Lost++
		}
	}
	return res, err
}
