package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// TestMainJobShaped runs the README's main job as written (`run --lab`
// with no lab setting: the quick profile, every default test, the
// reference DUT of rig.ReferenceLab; one RFC 2544 size drawn, 64 B in half
// the runs) and checks every test's figures against the lab's settings as
// the results record them (rate R, queue, bucket, line): a DUT figure for
// every test, none tester-limited, exit 0.
//
// tbf counts F−4 bytes per frame, so R is R/(8·(F−4)) fps. Checked:
//   - exit code 0 (nothing tester-limited, no error), no namespace left;
//     the results' lab truth as the settings give it;
//   - throughput: found, not tester-limited, within −2 % … +1 % of R (the
//     quick profile's accuracy goal, issue 12);
//   - latency at that rate: mean under 1 ms + 10 % of the time the full
//     queue takes to drain: a rate the DUT sustains keeps no standing
//     queue;
//   - frame loss: points on both sides of R; 0 at loads ≤ 98 % of R;
//     above 102 % of R the shaper's loss 1 − R/offered, less what the
//     queue and bucket absorb in the trial, ± 1 point;
//   - back-to-back at the line rate: the DUT passes a burst of N frames
//     while N − (bucket frames + R·N/line) fits in its queue, so
//     N* = (queue + bucket/(F−4)) / (1 − R/line); the reported average
//     from 5 % below N* to 5 % above what the path can hold (queue +
//     bucket + the kernel's input queue before tbf, netdev_max_backlog,
//     over 1 − R/line); each lossy burst held from 10 % below queue +
//     bucket (less R × its DUT pause, at most 2 ms) up to the input queue
//     more.
//
// Truth claim "main-job".
func TestMainJobShaped(t *testing.T) {
	c := truth.New(t, "main-job")
	needRoot(t)
	// One of the seven sizes per run (the whole job is the README's, too
	// long for every CI run): 64 B in half the runs, where a 4-byte
	// accounting error is 6 % and the back-to-back bursts are longest,
	// else one of the other six.
	seed := testseed.Seed(t, "./cmd/rfc2544")
	rng := rand.New(rand.NewPCG(seed, 0x3a1))
	sizes := []int{64}
	if rng.IntN(2) == 1 {
		sizes = []int{rfc2544.DefaultFrameSizes[1+rng.IntN(len(rfc2544.DefaultFrameSizes)-1)]}
	}
	var list []string
	for _, f := range sizes {
		list = append(list, strconv.Itoa(f))
	}
	t.Logf("seed %d: sizes %v", seed, sizes)
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := runCLI(t, context.Background(), "run", "--lab", "--sizes", strings.Join(list, ","), "--out", out)
	defer labGone(t, tempLabName())
	if err != nil {
		t.Fatalf("run: %v (exit %d)\nstderr:\n%s", err, exitCode(err, io.Discard), stderr)
	}
	res, err := reports.ReadResultsFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	setting := func(k string) float64 {
		v, err := strconv.ParseFloat(res.DUT.Settings[k], 64)
		if err != nil || v <= 0 {
			t.Fatalf("the results' DUT settings have %s = %q: %v", k, res.DUT.Settings[k], err)
		}
		return v
	}
	rateBps, queue, bucket, lineBps := setting("rate_ab_bps"), setting("limit_ab_packets"), setting("burst_ab_bytes"), res.Plan.LinkBps
	if rateBps != rig.ReferenceRateBps || queue != rig.ReferenceQueue || lineBps != rig.ReferenceLineBps {
		t.Errorf("the main job ran on R = %g bit/s, a %g-packet queue, a %g bit/s line: want the reference DUT's", rateBps, queue, lineBps)
	}
	t.Logf("transport %s (%s); the lab: R %g bit/s, queue %g, bucket %g bytes, line %g bit/s", res.Tester.Transport, res.Tester.TransportWhy, rateBps, queue, bucket, lineBps)
	// The kernel's input queue per CPU, which frames cross before tbf.
	backlog := 1000.0
	if v, err := os.ReadFile("/proc/sys/net/core/netdev_max_backlog"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(v))); err == nil && n > 0 {
			backlog = float64(n)
		}
	}
	rFPS := func(f int) float64 { return rateBps / (8 * float64(f-4)) }
	lineFPS := func(f int) float64 { return lineBps / (8 * float64(f+20)) }
	for _, f := range sizes {
		p, ok := res.DUT.TruthAt(f)
		want := (queue + bucket/float64(f-4)) / (1 - rFPS(f)/lineFPS(f))
		if !ok || math.Abs(p.ThroughputFPS-rFPS(f)) > 1e-9*rFPS(f) || math.Abs(p.BackToBackFrames-want) > 1e-9*want {
			t.Errorf("%d B: the results' lab truth %+v (%v), want %.3f fps and %.3f frames", f, p, ok, rFPS(f), want)
		}
	}
	if len(res.Throughput) != len(sizes) {
		t.Errorf("%d throughput results, want %d", len(res.Throughput), len(sizes))
	}
	for _, tp := range res.Throughput {
		r := rFPS(tp.FrameSize)
		t.Logf("%d B: throughput %.0f fps = %.2f%% of R (%.0f fps)", tp.FrameSize, tp.FPS, 100*tp.FPS/r, r)
		if !tp.Found || tp.TesterLimited {
			t.Errorf("%d B: throughput found %v, tester-limited %v (%s): want the DUT's", tp.FrameSize, tp.Found, tp.TesterLimited, tp.Reason)
			continue
		}
		c.Ratio("throughput / R", fmt.Sprintf("%d B, 30 Mbit/s", tp.FrameSize), r, tp.FPS, 0.98, 1.01)
	}
	if len(res.Latency) != len(sizes) {
		t.Errorf("%d latency results, want %d", len(res.Latency), len(sizes))
	}
	for _, l := range res.Latency {
		r := rFPS(l.FrameSize)
		drain := queue / r * 1e9 // ns
		limit := 1e6 + 0.1*drain
		t.Logf("%d B: latency at %.0f fps: min %d mean %.0f max %d ns", l.FrameSize, l.RateFPS, l.Summary.MinNs, l.Summary.MeanNs, l.Summary.MaxNs)
		if l.Skipped != "" || l.Summary.Count == 0 || l.Summary.MinNs <= 0 {
			t.Errorf("%d B: latency skipped %q, count %d, min %d ns; want measured", l.FrameSize, l.Skipped, l.Summary.Count, l.Summary.MinNs)
			continue
		}
		c.Within("latency mean / (1 ms + 10 % of the full queue's drain)", fmt.Sprintf("%d B", l.FrameSize), l.Summary.MeanNs/limit, 0, 1)
	}
	if len(res.FrameLoss) != len(sizes) {
		t.Errorf("%d frame loss results, want %d", len(res.FrameLoss), len(sizes))
	}
	for _, fl := range res.FrameLoss {
		r := rFPS(fl.FrameSize)
		if fl.Skipped != "" || len(fl.Points) == 0 {
			t.Errorf("%d B: frame loss skipped %q with %d points", fl.FrameSize, fl.Skipped, len(fl.Points))
		}
		below, above := 0, 0
		for _, p := range fl.Points {
			if p.OfferedFPS <= 0.98*r {
				below++
			} else if p.OfferedFPS >= 1.02*r {
				above++
			}
		}
		if below == 0 || above == 0 {
			t.Errorf("%d B: frame loss has %d points below R and %d above: want both sides", fl.FrameSize, below, above)
		}
		for _, p := range fl.Points {
			t.Logf("%d B: frame loss at %.0f fps (%.0f%% of R): %.2f%%", fl.FrameSize, p.OfferedFPS, 100*p.OfferedFPS/r, p.LossPercent)
			if p.TesterLimited {
				t.Errorf("%d B: frame loss at %.0f fps is tester-limited", fl.FrameSize, p.OfferedFPS)
				continue
			}
			k := fmt.Sprintf("%d B at %.0f%% of R", fl.FrameSize, 100*p.OfferedFPS/r)
			switch {
			case p.OfferedFPS <= 0.98*r:
				c.Within("frame loss % at ≤ 0.98 R", k, p.LossPercent, 0, 0)
			case p.OfferedFPS >= 1.02*r && p.Sent > 0:
				// What queue, bucket and the kernel's input queue before
				// tbf hold reduces the loss below 1 − R/offered.
				ideal := 100 * (1 - r/p.OfferedFPS)
				absorb := 100 * (queue + bucket/float64(fl.FrameSize-4) + backlog) / float64(p.Sent)
				c.Within("frame loss − (1 − R/offered) at ≥ 1.02 R, points", k, p.LossPercent-ideal, -absorb-1, 1)
			}
		}
	}
	if len(res.BackToBack) != len(sizes) {
		t.Errorf("%d back-to-back results, want %d", len(res.BackToBack), len(sizes))
	}
	for _, b := range res.BackToBack {
		r, line := rFPS(b.FrameSize), lineFPS(b.FrameSize)
		set := queue + bucket/float64(b.FrameSize-4) // the buffer the lab sets, frames
		want := set / (1 - r/line)
		// The buffer the path held in this run: what each lossy burst
		// carried beyond the R × its arrival time that tbf forwarded
		// meanwhile. The kernel's input queue (netdev_max_backlog per
		// CPU) holds frames before they meet tbf: at 64 B the lab held
		// 0-250 frames more than queue + bucket (2026-12-01: 7,877-8,125
		// of an 8,928-frame burst crossed for 7,875 modelled), and with
		// builds running 2.9 % less once (1,578 for 1,625: the DUT's
		// forwarding, on a shared CPU, paused during the burst), and in a
		// quiet CI run 5.3 % less (1,539 for 1,625: 86 frames, a pause of
		// 1.4 ms at R). So the path must hold at least 0.9 × queue + bucket,
		// less R × the burst's own DUT pause: in CI on 2026-12-02 one burst
		// of five held 1,239 (the others up to 1,850). A pause p stops tbf
		// while its queue is full (the path holds R·p less), and the X
		// frames the input queue still holds when the burst ends wait X/R
		// more (it holds X more); the worst latency less the least (a frame
		// through the bucket unqueued) less the full queue's wait, limit/R,
		// is p + X/R, at least p. So the path holds at least
		// queue + bucket − R × that. Measured on the quiet lab host: 2.6–5.8
		// ms in every lossy 64 B burst, holding 1,647–1,898 frames.
		held := 0.0
		const maxPause = 2e-3 // s: more is a stall of the host, not the DUT
		for _, tr := range b.Trials {
			if tr.BurstFrames == 0 || tr.OfferedFPS <= 0 || len(tr.Result.Streams) == 0 || tr.Result.Streams[0].Lost == 0 || tr.Outcome == rfc2544.OutcomeTesterLimited {
				continue
			}
			s := tr.Result.Streams[0]
			e := float64(s.Received) - r*float64(tr.BurstFrames)/tr.OfferedFPS
			pause := min(maxPause, max(0, float64(s.Latency.MaxNs-s.Latency.MinNs)/1e9-queue/r))
			held = max(held, e)
			t.Logf("%d B: a %d-frame burst at %.0f fps left %d frames through: the path held %.0f; latency %.2f … %.2f ms, a DUT pause of %.2f ms",
				b.FrameSize, tr.BurstFrames, tr.OfferedFPS, s.Received, e, float64(s.Latency.MinNs)/1e6, float64(s.Latency.MaxNs)/1e6, pause*1e3)
			c.Ratio("frames a lossy burst left in the path / queue + bucket", fmt.Sprintf("%d B, a %d-frame burst, DUT pause %.2f ms", b.FrameSize, tr.BurstFrames, pause*1e3),
				set, e, (0.9*set-r*pause)/set, (set+backlog)/set)
		}
		hi := (set + backlog) / (1 - r/line)
		t.Logf("%d B: back-to-back avg %.0f frames at %.0f fps (cap %d), model %.0f (queue + bucket) … %.0f (the most the path held, %.0f frames)",
			b.FrameSize, b.AvgFrames, b.RateFPS, b.CapFrames, want, hi, held)
		if b.Skipped != "" || b.TesterLimited {
			t.Errorf("%d B: back-to-back skipped %q, tester-limited %v; want measured", b.FrameSize, b.Skipped, b.TesterLimited)
			continue
		}
		if want >= float64(b.CapFrames) {
			// The quick profile's 100 ms cap is shorter than what the DUT
			// holds (1280 and 1518 B here): the burst must reach the cap.
			if !b.AtCap || b.AvgFrames != float64(b.CapFrames) {
				t.Errorf("%d B: back-to-back avg %.0f frames (at cap %v), want the cap %d (the model's %.0f is beyond it)",
					b.FrameSize, b.AvgFrames, b.AtCap, b.CapFrames, want)
			}
		} else if b.AtCap {
			t.Errorf("%d B: back-to-back at its cap %d, want the DUT's %.0f frames", b.FrameSize, b.CapFrames, want)
		} else {
			c.Ratio("back-to-back frames / the model (queue + bucket over 1 − R/line)", fmt.Sprintf("%d B", b.FrameSize), want, b.AvgFrames, 0.95, 1.05*hi/want)
		}
	}
}
