package rfc2544

import (
	"context"

	"github.com/rfc2544/rfc2544/framing"
)

// FrameLoss measures the frame loss rate curve at one frame size
// (RFC 2544 §26.3): trials from 100% of line rate down in
// frame_loss.step_percent steps, stopping after two successive trials
// without loss (or at the last step above 0% with frame_loss.full_sweep).
// Only trials that were not tester-limited count as the two lossless ones.
func (r *Runner) FrameLoss(ctx context.Context, frameSize int) (FrameLossResult, error) {
	p, err := r.prepare()
	if err != nil {
		return FrameLossResult{FrameSize: frameSize}, err
	}
	return r.frameLoss(ctx, p, frameSize)
}

func (r *Runner) frameLoss(ctx context.Context, p Plan, size int) (FrameLossResult, error) {
	out := FrameLossResult{FrameSize: size}
	pr, err := r.probe(ctx, p, size)
	if err != nil {
		out.Incomplete = true
		return out, err
	}
	if !pr.Passed {
		out.Skipped = pr.Reason
		return out, nil
	}
	lr := framing.LineRateFPS(p.LinkBps, size)
	clean := 0
	for k := 0; ; k++ {
		pct := round9(100 - float64(k)*p.FrameLoss.StepPercent)
		if pct <= 1e-9 {
			break
		}
		rec, err := r.trial(ctx, p, trialReq{
			test: TestFrameLoss, size: size, step: k + 1, intendedPercent: pct,
			spec: p.spec(size, pct/100*lr),
		})
		if err != nil {
			out.Incomplete = true
			return out, err
		}
		out.Trials = append(out.Trials, rec)
		out.Points = append(out.Points, FrameLossPoint{
			IntendedPercent: pct,
			OfferedPercent:  rec.OfferedPercent,
			OfferedFPS:      rec.OfferedFPS,
			LossPercent:     rec.LossPercent,
			Sent:            rec.Sent,
			Received:        rec.Received,
			TesterLimited:   rec.Outcome == OutcomeTesterLimited,
			Sizes:           SizeLosses(rec.Result),
		})
		if rec.Outcome == OutcomePass { // tolerance 0: no frame lost
			clean++
		} else {
			clean = 0
		}
		if clean >= 2 && !p.FrameLoss.FullSweep {
			break
		}
	}
	return out, nil
}
