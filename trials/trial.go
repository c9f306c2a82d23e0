package trials

import (
	"fmt"
	"slices"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// hardStop is when a generator that falls behind is cut off: just after the
// trial's duration, so the trial is marked tester-limited rather than run
// long (0, none, for a burst).
func hardStop(spec Spec) time.Duration {
	if spec.BurstFrames > 0 {
		return 0
	}
	return spec.Duration + spec.Duration/100 + 10*time.Millisecond
}

// intendedFPS is the rate a stream was meant to be offered at (frames/s):
// the average planned rate of its pacer (RateChange included), or the
// spec's rate when the pacer plans no rate.
func intendedFPS(st *streamState, spec Spec) float64 {
	if st.pacer.RateFPS > 0 && st.pacer.Total > 1 {
		return float64(st.pacer.Total-1) / st.pacer.SendTime(st.pacer.Total-1).Seconds()
	}
	return spec.RateFPS
}

// pacedBatch caps the batch of paced streams: a batch's frames share one
// transmit stamp and leave one after the other, so a small batch keeps the
// stamp within tens of µs of each frame's departure (full-speed bursts and
// calibration use Config.Batch).
const pacedBatch = 32

// sender is the index of the sending port of a direction.
func sender(d Direction) int {
	if d == BtoA {
		return 1
	}
	return 0
}

func rateChangeFPS(s Spec) float64 {
	if s.RateChange != nil {
		return s.RateChange.RateFPS
	}
	return 0
}

// generatorReasons says why a stream's trial is tester-limited on the
// sending side (both engines' rules; see the package doc): frames the kernel
// refused, a generator behind its plan, an offered rate more than tol below
// the intended fps, or a stall over maxLag whose catch-up burst could explain
// the loss. Only a stall is transient: the generator kept its rate but the
// tester's host did not schedule it for a while (the last rule; an
// offered rate short by no more than the time the generator fell behind,
// stallShortfall; or a generator that made up most of its lag, outranStall).
func generatorReasons(st *streamState, r StreamResult, intended, tol float64, maxLag time.Duration, stopped bool) (transient bool, reasons []string) {
	switch {
	case st.failed > 0:
		return false, []string{fmt.Sprintf("stream %d: the kernel refused %d frames", st.spec.ID, st.failed)}
	case st.pacer.Total > 0 && st.queued < st.pacer.Total && !stopped:
		why := fmt.Sprintf("stream %d: generator sent %d of %d planned frames in time (behind the intended %.0f fps)",
			st.spec.ID, st.queued, st.pacer.Total, intended)
		return outranReasons(r, why)
	case st.pacer.RateFPS > 0 && st.pacer.Total > 1 && r.OfferedFPS < intended*(1-tol):
		why := fmt.Sprintf("stream %d: generator offered %.0f fps, %.2f%% below the intended %.0f fps",
			st.spec.ID, r.OfferedFPS, 100*(1-r.OfferedFPS/intended), intended)
		if stallShortfall(r) {
			return true, []string{fmt.Sprintf("%s: it fell %.1f ms behind schedule once, a stall of this host", why, float64(r.MaxLagNs)/1e6)}
		}
		return outranReasons(r, why)
	}
	if why := stallReason(r, maxLag); why != "" {
		return true, []string{why}
	}
	return false, nil
}

// outranReasons is a generator's shortfall reason why, transient when the
// generator made up most of its lag (outranStall).
func outranReasons(r StreamResult, why string) (transient bool, reasons []string) {
	if end, ok := outranStall(r); ok {
		return true, []string{fmt.Sprintf("%s: it fell %.1f ms behind schedule and was %.1f ms behind at the end, a stall of this host", why, float64(r.MaxLagNs)/1e6, float64(end)/1e6)}
	}
	return false, []string{why}
}

// trialPacer is the pacer of one stream of spec: a burst of
// Spec.BurstFrames (batches of at most batch frames, or pacedBatch when
// pacedBursts and the burst is paced), a timed trial at Spec.RateFPS
// (batches of at most pacedBatch), or, at rate 0, unpaced batches of batch
// frames stopped by the hard stop (calibration).
func trialPacer(spec Spec, batch int, pacedBursts bool) Pacer {
	switch {
	case spec.BurstFrames > 0:
		b := batch
		if pacedBursts && spec.RateFPS > 0 {
			b = min(b, pacedBatch)
		}
		return Pacer{RateFPS: spec.RateFPS, Total: uint64(spec.BurstFrames), MaxBatch: b}
	case spec.RateFPS > 0:
		return NewDurationPacer(spec.RateFPS, spec.Duration, spec.RateChange, min(batch, pacedBatch))
	default:
		return Pacer{MaxBatch: batch}
	}
}

// streamSizes is the frame size of each template a stream cycles through,
// frame n using entry n mod len: one per flow for a frame size; for a mix
// (framing.MixOf), len(pattern)·flows entries, entry k of size
// pattern[k mod len(pattern)] on flow k mod flows, so frame n has the
// pattern's size n mod len(pattern) and flow n mod flows, as the receiver
// expects.
func streamSizes(frameSize, flows int) []int {
	flows = max(flows, 1)
	m, ok := framing.MixOf(frameSize)
	if !ok {
		return slices.Repeat([]int{frameSize}, flows)
	}
	pat := m.Pattern()
	out := make([]int, len(pat)*flows)
	for k := range out {
		out[k] = pat[k%len(pat)]
	}
	return out
}
