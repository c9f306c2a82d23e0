package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// firstHopTester lets the path probe (RFC 2544 §9.4) work when the first hop
// is the one that cannot carry a frame size: the raw engine refuses, before
// sending, a frame larger than its own port's MTU (the kernel would refuse it
// anyway), and an error would stop the whole run. For a probe trial only, the
// refusal is turned into what it means for the path: not one frame of that
// size crossed it (a result with nothing sent and nothing received), so the
// Runner reports the size as zero throughput with a reason, and the run goes
// on with the other sizes. The engine's own message, which names the port,
// its MTU and the fix, replaces the Runner's generic reason afterwards
// (explain). Any other trial, or any other error, passes through unchanged:
// with --no-probe a too-large size is an error, as it should be.
type firstHopTester struct {
	next rfc2544.Tester
	// refused holds the engine's message per refused frame size.
	refused map[int]string
}

var _ rfc2544.Tester = (*firstHopTester)(nil)

// isProbe reports whether spec is a path probe as the Runner builds it.
func isProbe(spec trials.Spec) bool {
	return spec.BurstFrames == rfc2544.ProbeFrames && spec.Duration == 0 && spec.TagAfter == 0 && spec.RateChange == nil
}

func (f *firstHopTester) Run(ctx context.Context, spec trials.Spec) (trials.Result, error) {
	res, err := f.next.Run(ctx, spec)
	if err == nil || !errors.Is(err, framing.ErrAboveMTU) || !isProbe(spec) {
		return res, err
	}
	if f.refused == nil {
		f.refused = map[int]string{}
	}
	msg := err.Error()
	var fe *framing.FrameSizeError
	if errors.As(err, &fe) {
		msg = fmt.Sprintf("a tester port's MTU is %d (frames of at most %d bytes); raise the MTU on every hop to at least %d",
			fe.MTU, fe.Limit, framing.IPPacketSize(fe.Size, fe.VLAN))
	}
	f.refused[spec.FrameSize] = msg
	out := trials.Result{Spec: spec, Start: res.Start, Paths: res.Paths}
	for _, st := range spec.Streams {
		out.Streams = append(out.Streams, trials.StreamResult{ID: st.ID, Direction: st.Direction,
			IntendedFPS: spec.RateFPS, TaggedLatencyNs: -1, LastLossNs: -1})
	}
	return out, nil
}

// explain puts the engine's message for each refused size into the results'
// reasons, in place of the Runner's "none of the probe frames came through".
func (f *firstHopTester) explain(res *rfc2544.Results) {
	for size, msg := range f.refused {
		var generic string
		for _, p := range res.Probes {
			if p.FrameSize == size && !p.Passed {
				generic = p.Reason
			}
		}
		if generic == "" {
			continue
		}
		better := fmt.Sprintf("frame size %d cannot leave the tester: %s; reported as zero throughput (RFC 2544 §9.4)", size, msg)
		fix := func(s *string) { *s = strings.ReplaceAll(*s, generic, better) }
		for i := range res.Probes {
			fix(&res.Probes[i].Reason)
		}
		for i := range res.Throughput {
			fix(&res.Throughput[i].Reason)
		}
		for i := range res.Latency {
			fix(&res.Latency[i].Skipped)
		}
		for i := range res.FrameLoss {
			fix(&res.FrameLoss[i].Skipped)
		}
		for i := range res.BackToBack {
			fix(&res.BackToBack[i].Skipped)
		}
		for i := range res.Recovery {
			fix(&res.Recovery[i].Skipped)
		}
	}
}
