package wire

import (
	"math"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

// SendFPS is what the agent would send in a setup, in frames per second:
// its B->A streams at the higher of the trial's rates, plus reflection.
func SendFPS(s TrialSetup) float64 {
	rate := s.Spec.RateFPS
	if rc := s.Spec.RateChange; rc != nil {
		rate = max(rate, rc.RateFPS)
	}
	n := 0
	for _, st := range s.Spec.Streams {
		if st.Direction == trials.BtoA {
			n++
		}
	}
	return float64(n)*rate + s.ReflectFPS
}

// TrialLength is how long a setup's trial lasts: learning, traffic (a
// burst at its rate) and the settle wait.
//
// It saturates at math.MaxInt64 rather than overflow (a burst of many frames
// at a tiny rate), so a check against a maximum never passes by wrapping.
func TrialLength(s TrialSetup) time.Duration {
	d := float64(s.Spec.Duration)
	if s.Spec.BurstFrames > 0 {
		d = 0
		if s.Spec.RateFPS > 0 {
			d = float64(s.Spec.BurstFrames) / s.Spec.RateFPS * float64(time.Second)
		}
	}
	total := float64(s.Spec.Learning) + d + float64(s.Spec.Settle)
	if !(total < math.MaxInt64) { // NaN too
		return math.MaxInt64
	}
	return time.Duration(total)
}

// LearningFrames is how many learning datagrams the agent sends at Start:
// one per flow of each B->A stream.
func LearningFrames(s TrialSetup) int {
	n := 0
	for _, st := range s.Spec.Streams {
		if st.Direction == trials.BtoA {
			n += max(st.Flows, 1)
		}
	}
	return n
}

// LearningWindow is the time the agent spreads its learning datagrams over:
// the trial's learning wait, at least MinLearning.
func LearningWindow(s TrialSetup) time.Duration { return max(s.Spec.Learning, MinLearning) }

// MinLearning is the shortest learning wait of the agent's UDP sender
// (package trials waits at least this long after the learning datagrams).
const MinLearning = 20 * time.Millisecond

// RunID is the signature run id (framing.Signature.RunID) of a two-host
// trial: both hosts derive it from the trial id (1 to 255, never 0).
func RunID(trialID uint64) uint8 { return uint8(trialID%255) + 1 }
