package rfc2544

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/rfc2544/rfc2544/framing"
)

// BackToBack measures the longest burst at line rate that the DUT forwards
// without loss at one frame size (RFC 2544 §26.4 as updated by RFC 9004).
// Each of back_to_back.repetitions repetitions is a binary search on the
// burst length: first a burst as long as the cap (burst_cap × line rate);
// a lossless burst raises the lower bound, a lossy one lowers the upper
// bound, the next burst is the midpoint, and the search ends when the bounds
// are min_step frames apart. The result is the lower bound. A burst passes
// only with zero loss, whatever the throughput tolerance.
//
// Sizes without a throughput are skipped, so are sizes whose throughput is
// tester-limited (the tester cannot make line-rate bursts), and so are sizes
// whose throughput equals the line rate (RFC 9004 §5: such a DUT never needs its buffer,
// so the test would measure the tester). The implied buffer time is
// AvgFrames / line-rate fps; the corrected buffer time subtracts what the
// DUT forwarded during the burst: Implied × (1 − throughput / line rate)
// (RFC 9004 §5). Results at the cap are flagged AtCap: the buffer may be
// larger than the longest burst tried.
func (r *Runner) BackToBack(ctx context.Context, frameSize int, tput ThroughputResult) (BackToBackResult, error) {
	p, err := r.prepare()
	if err != nil {
		return BackToBackResult{FrameSize: frameSize}, err
	}
	return r.backToBack(ctx, p, frameSize, tput)
}

func (r *Runner) backToBack(ctx context.Context, p Plan, size int, tput ThroughputResult) (BackToBackResult, error) {
	lr := framing.LineRateFPS(p.LinkBps, size)
	out := BackToBackResult{FrameSize: size, RateFPS: lr}
	if !tput.Found {
		out.Skipped = fmt.Sprintf("no throughput at %d bytes: RFC 9004 §5 needs it first (%s)", size, tput.Reason)
		return out, nil
	}
	out.ThroughputFPS = tput.FPS / float64(p.Streams())
	if tputPercent(tput) >= 100-1e-9 && !tput.TesterLimited {
		out.Skipped = fmt.Sprintf("throughput equals the line rate at %d bytes (%.0f fps): the DUT never needs its buffer, so back-to-back would measure the tester (RFC 9004 §5)", size, lr)
		return out, nil
	}
	if tput.TesterLimited {
		out.Skipped = fmt.Sprintf("the throughput at %d bytes is tester-limited (%s): the tester cannot send back-to-back frames at line rate", size, tput.TesterLimitReason)
		return out, nil
	}
	// A throughput search that met flow control does not skip the test:
	// a DUT may hold the tester back only now and then (a lab DUT on a
	// busy CPU did, at 64 B, in one trial of a search whose result was not
	// held back). The first burst the DUT holds back skips it, below.
	b := p.BackToBack
	out.CapFrames = max(1, int64(math.Floor(b.BurstCap.D().Seconds()*lr)))
	out.MinStepFrames = b.MinStepFrames
	if out.MinStepFrames == 0 {
		out.MinStepFrames = max(1, int64(math.Round(float64(out.CapFrames)*b.MinStepPercent/100)))
	}
	step := 0
	for rep := 1; rep <= b.Repetitions; rep++ {
		var lo int64 // longest lossless burst
		hi := out.CapFrames + 1
		n := out.CapFrames
		for {
			step++
			spec := p.spec(size, lr)
			spec.Duration = 0
			spec.BurstFrames = n
			rec, err := r.trial(ctx, p, trialReq{
				test: TestBackToBack, size: size, step: step, rep: rep, intendedPercent: 100, spec: spec,
			})
			if err != nil {
				out.Incomplete = true
				out.summarize()
				return out, err
			}
			out.Trials = append(out.Trials, rec)
			if rec.Result.FlowControlled {
				out.Skipped = fmt.Sprintf("the DUT held the tester back (flow control) during a burst at %d bytes (%s): frames cannot reach it back to back at line rate, so its buffer cannot be measured (RFC 2544 assumes flow control off; turn it off on the ports to measure it)", size, rec.Result.FlowControlReason)
				out.summarize()
				return out, nil
			}
			if rec.Outcome == OutcomeTesterLimited {
				out.TesterLimited = true
				break
			}
			if rec.Outcome == OutcomePass {
				lo = n
			} else {
				hi = n
			}
			if lo == out.CapFrames || hi-lo <= out.MinStepFrames {
				break
			}
			n = lo + (hi-lo)/2
		}
		out.BurstFrames = append(out.BurstFrames, lo)
	}
	out.summarize()
	return out, nil
}

// summarize computes the statistics of the repetitions so far.
func (out *BackToBackResult) summarize() {
	if len(out.BurstFrames) == 0 {
		return
	}
	x := make([]float64, len(out.BurstFrames))
	for i, v := range out.BurstFrames {
		x[i] = float64(v)
	}
	out.AvgFrames = stat.Mean(x, nil)
	if len(x) > 1 {
		out.StddevFrames = stat.StdDev(x, nil)
	}
	out.MinFrames = slices.Min(out.BurstFrames)
	out.MaxFrames = slices.Max(out.BurstFrames)
	out.AtCap = out.MaxFrames >= out.CapFrames
	if out.RateFPS > 0 {
		out.ImpliedBufferS = out.AvgFrames / out.RateFPS
		out.CorrectedBufferS = out.ImpliedBufferS * (1 - out.ThroughputFPS/out.RateFPS)
	}
}
