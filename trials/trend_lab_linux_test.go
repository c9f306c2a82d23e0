//go:build linux

package trials_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// trendMaxFPS bounds the shaped rate drawn, in frames/s: well under the
// tester's ceiling (about 700 kfps raw, less for UDP, on this 2-CPU box) at
// 1.2 × R, so the trial above R measures the DUT, not the tester.
const trendMaxFPS = 150e3

// trendQueueFill is the most frames the trial above R may leave in the
// lab's 1000-packet queue, so that it loses nothing: above about 3 kfps
// the overload is reduced from 1.1–1.2 × R to fill 300 to this many.
const trendQueueFill = 600

// trendTrial is the trial duration: the quick profile's final trials
// (rfc2544.QuickMinFinalDuration), the ones the verdict decides.
const trendTrial = 2 * time.Second

// TestAccuracySustainedDefaultQueue proves the sustained-rate verdict on the lab's
// default shaping (tbf at R over its 1000-packet queue, 10 ms bucket), with
// the rate and frame size drawn at test time (TREND_SEED replays a draw):
// a 2 s trial a little above R that loses nothing, because the queue
// absorbs the excess, is not sustained, and its estimate offered/(1+slope)
// is within ±5 % of the tbf rate R/(8·(F−4)); a trial at 0.9 × R is
// sustained. Both the raw and the UDP engine (the same receiver code).
// TREND_RATE_BPS and TREND_FRAME pin the rate and size. A trial above R
// judged sustained is rerun (up to three times, logged) when the generator
// fell behind long enough for the DUT's bucket to bank more than half the
// planned fill: a stall of this host then took the overload away (CI under
// one busy CPU, 2026-12-01: 12 ms behind at 65 kfps, 1.009 × R, 80 frames
// queued at the end for 300–600 planned).
func TestAccuracySustainedDefaultQueue(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TREND_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("TREND_SEED=%q: %v", s, err)
		}
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 0x7e4d))
	var rateBps float64
	var frame int
	var rFPS float64
	for {
		rateBps = math.Round(10e6 * math.Pow(20, rng.Float64())) // 10–200 Mbit/s, log-uniform
		frame = 64 + rng.IntN(1518-64+1)
		rFPS = rateBps / (8 * float64(frame-4)) // tbf counts L2 bytes without FCS
		if rFPS <= trendMaxFPS {
			break
		}
	}
	// The token bucket (10 ms at R) passes its excess at once: only
	// the excess beyond it fills the queue.
	// TREND_RATE_BPS and TREND_FRAME pin a case (the overload still drawn).
	if v, err := strconv.ParseFloat(os.Getenv("TREND_RATE_BPS"), 64); err == nil && v > 0 {
		rateBps = v
	}
	if v, err := strconv.Atoi(os.Getenv("TREND_FRAME")); err == nil && v >= 64 {
		frame = v
	}
	rFPS = rateBps / (8 * float64(frame-4))
	// The overload that leaves fill frames queued at the end: the 10 ms
	// bucket (0.01·R frames) is spent first, so at high rates the queue
	// starts growing late in the trial — the hard case.
	fill := trendQueueFill/2 + rng.Float64()*trendQueueFill/2
	over := 1 + min(0.1+0.1*rng.Float64(), (fill+0.01*rFPS)/(trendTrial.Seconds()*rFPS))
	t.Logf("TREND_SEED=%d: R = %.2f Mbit/s, %d B: tbf rate %.0f fps; trial above at %.4f × R", seed, rateBps/1e6, frame, rFPS, over)

	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: uint64(rateBps)}})
	udp, raw := labTesters(t, st)
	var limited []string
	defer func() {
		if len(limited) > 0 && !t.Failed() {
			t.Skipf("the trial above R was tester-limited or stalled, so not judged (the tester's ceiling here, not the DUT's): %s", strings.Join(limited, "; "))
		}
	}()
	for _, eng := range []struct {
		name string
		run  func(context.Context, trials.Spec) (trials.Result, error)
	}{{"raw", raw.Run}, {"udp", udp.Run}} {
		// stalled says a trial above R is not the case meant: the
		// generator fell behind by a stall long enough for the idle DUT
		// to bank, as tokens of its bucket (up to 10 ms at R), more than
		// half the fill the overload was to leave queued at the end.
		stalled := func(r trials.Result) bool {
			lag := min(time.Duration(r.Streams[0].MaxLagNs), 10*time.Millisecond)
			return lag.Seconds()*rFPS > fill/2
		}
		trial := func(fps float64) trials.Result {
			t.Helper()
			spec := trials.Spec{FrameSize: frame, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}},
				RateFPS: fps, Duration: trendTrial, Settle: time.Second}
			var r trials.Result
			for try := range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				var err error
				r, err = eng.run(ctx, spec)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v", eng.name, err)
				}
				logTrend(t, eng.name, rFPS, r)
				// Rerun only a trial the engine marks transiently
				// limited (a stall of this host), or one above R
				// whose stall let the DUT bank the overload (both
				// logged), never another.
				if fps > rFPS && stalled(r) && try < 2 {
					if ok, _ := r.Sustained(); !ok {
						break // judged not sustained all the same
					}
					t.Logf("%s: rerun: the generator fell %v behind, %.0f frames of bucket at R against a planned fill of %.0f",
						eng.name, time.Duration(r.Streams[0].MaxLagNs), min(float64(r.Streams[0].MaxLagNs)/1e9, 0.01)*rFPS, fill)
					continue
				}
				if !r.TesterLimited || !r.TesterLimitTransient || try == 2 {
					break
				}
			}
			return r
		}

		// A tester-limited trial (this host stalled the generator and
		// it caught up with a burst) may lose frames; it must still be
		// judged sustained below R and not above: the verdict has to
		// see through the tester's own stalls.
		below := trial(0.9 * rFPS)
		s := below.Streams[0]
		if s.Sent == 0 || s.Lost != 0 && !below.TesterLimited {
			t.Errorf("%s at 0.9 × R: lost %d of %d, want none", eng.name, s.Lost, s.Sent)
		}
		if ok, v := below.Sustained(); !ok {
			t.Errorf("%s at 0.9 × R: not sustained (%s), want sustained", eng.name, v.Reason)
		}

		above := trial(over * rFPS)
		s = above.Streams[0]
		if s.Sent == 0 || s.Lost != 0 && !above.TesterLimited {
			t.Errorf("%s at %.3f × R: lost %d of %d; the queue should absorb the excess", eng.name, over, s.Lost, s.Sent)
		}
		if above.TesterLimited && !above.TesterLimitTransient {
			// The generator could not keep the load above R (its
			// ceiling on this host, shared and loaded): what the DUT
			// was offered is not what the verdict is to be judged on.
			limited = append(limited, eng.name+": "+above.TesterLimitReason)
			continue
		}
		ok, v := above.Sustained()
		// A trial that lost frames (a stall's catch-up on top of the
		// overload) is judged by Overloaded: the DUT still busy at the
		// end, forwarding below the offered rate.
		if over, why := above.Overloaded(); ok && s.Lost > 0 && over {
			t.Logf("%s: lost %d; %s", eng.name, s.Lost, why)
			continue
		}
		if ok && stalled(above) {
			limited = append(limited, fmt.Sprintf("%s: three trials above R met stalls of the generator (the last %v) that let the DUT's bucket absorb the overload",
				eng.name, time.Duration(s.MaxLagNs)))
			continue
		}
		if ok {
			t.Errorf("%s at %.3f × R: sustained, want not (the queue grew)", eng.name, over)
			if tr := s.Trend; tr != nil {
				t.Logf("%s: per bin: count %v\nmin %v\nmean %v", eng.name, tr.Count, tr.MinNs, tr.MeanNs)
			}
			continue
		}
		e := v.SustainedFPS/rFPS - 1
		t.Logf("%s: %s; estimate error %+.2f %%", eng.name, v.Reason, 100*e)
		if math.Abs(e) > 0.05 {
			t.Errorf("%s at %.3f × R: sustained rate ≈ %.0f fps, tbf rate %.0f: error %+.2f %%, want within ±5 %%",
				eng.name, over, v.SustainedFPS, rFPS, 100*e)
		}
	}
}

// logTrend logs a trial's counts and its latency trend.
func logTrend(t *testing.T, name string, rFPS float64, r trials.Result) {
	t.Helper()
	s := r.Streams[0]
	t.Logf("%s: intended %.0f (%.3f × R) offered %.0f fps, sent %d lost %d, latency min %.3f mean %.3f max %.3f ms, lag %v",
		name, s.IntendedFPS, s.IntendedFPS/rFPS, s.OfferedFPS, s.Sent, s.Lost,
		float64(s.Latency.MinNs)/1e6, s.Latency.MeanNs/1e6, float64(s.Latency.MaxNs)/1e6, time.Duration(s.MaxLagNs))
	if r.TesterLimited {
		t.Logf("%s: tester-limited (transient %v): %s", name, r.TesterLimitTransient, r.TesterLimitReason)
	}
	if tr := s.Trend; tr != nil {
		tstat := math.Inf(1)
		if tr.SlopeSENsPerS > 0 {
			tstat = tr.SlopeNsPerS / tr.SlopeSENsPerS
		}
		t.Logf("%s: trend %d bins of %v over %.3f s: slope %.4g ns/s (t = %.3g, R² = %.3f), base %.3f ms, rise %.3f ms, step %.3f ms, end %.3f ms, growing %v; busy from %.3f s (%d bins, slope %.4g ns/s): forwarded %.0f fps (%.4f × R); offered/(1+slope) = %.0f fps (%.4f × R)",
			name, tr.Bins, time.Duration(tr.BinNs), tr.SpanS, tr.SlopeNsPerS, tstat, tr.RSquared,
			float64(tr.BaseNs)/1e6, float64(tr.RiseNs)/1e6, float64(tr.StepNs)/1e6, float64(tr.EndNs)/1e6, tr.Growing(),
			tr.BusyFromS, tr.BusyBins, tr.BusySlopeNsPerS, tr.ForwardedFPS, tr.ForwardedFPS/rFPS,
			s.OfferedFPS/(1+tr.SlopeNsPerS/1e9), s.OfferedFPS/(1+tr.SlopeNsPerS/1e9)/rFPS)
	}
}
