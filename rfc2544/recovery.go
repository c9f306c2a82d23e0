package rfc2544

import (
	"context"
	"fmt"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// Recovery measures system recovery at one frame size (RFC 2544 §26.5): one
// trial at min(110% of the throughput, line rate) for system_recovery.overload,
// then at half that rate for system_recovery.recovery. The recovery time is
// the transmit time of the last lost frame minus the time of the rate change
// (zero when the last loss came before it). When frames are still being lost
// within two frame times of the end, the DUT has not recovered and Recovered
// is false. A size without a throughput is skipped.
func (r *Runner) Recovery(ctx context.Context, frameSize int, tput ThroughputResult) (RecoveryResult, error) {
	p, err := r.prepare()
	if err != nil {
		return RecoveryResult{FrameSize: frameSize}, err
	}
	return r.recovery(ctx, p, frameSize, tput)
}

func (r *Runner) recovery(ctx context.Context, p Plan, size int, tput ThroughputResult) (RecoveryResult, error) {
	out := RecoveryResult{FrameSize: size}
	if !tput.Found {
		out.Skipped = fmt.Sprintf("no throughput at %d bytes to overload from: %s", size, tput.Reason)
		return out, nil
	}
	n := float64(p.Streams())
	lr := framing.LineRateFPS(p.LinkBps, size)
	over := min(1.1*tputPercent(tput)/100*lr, lr)
	low := over / 2
	out.OverloadFPS, out.RecoveryFPS = over*n, low*n
	at := p.Recovery.Overload.D()
	spec := p.spec(size, over)
	spec.Duration = at + p.Recovery.Recovery.D()
	spec.RateChange = &trials.RateChange{At: at, RateFPS: low}
	rec, err := r.trial(ctx, p, trialReq{
		test: TestRecovery, size: size, step: 1, intendedPercent: over / lr * 100, spec: spec,
	})
	if err != nil {
		out.Incomplete = true
		return out, err
	}
	out.Trials = append(out.Trials, rec)
	last := rec.Result.Totals().LastLossNs
	switch {
	case last < 0:
		out.Recovered = true
		out.Note = fmt.Sprintf("no frame was lost: %.4g%% of line rate did not overload the DUT", over/lr*100)
	case time.Duration(last) >= spec.Duration-time.Duration(2*float64(time.Second)/low):
		out.Note = fmt.Sprintf("frames were still being lost at the end of the %v at the reduced rate: lengthen system_recovery.recovery", p.Recovery.Recovery)
	default:
		out.Recovered = true
		out.RecoveryS = max(0, time.Duration(last)-at).Seconds()
	}
	if rec.Outcome == OutcomeTesterLimited {
		out.Note = joinNote(out.Note, "the tester could not offer the overload: "+rec.TesterLimitReason)
	}
	return out, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
