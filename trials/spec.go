package trials

import (
	"errors"
	"fmt"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// Direction says which tester port sends a stream and which receives it.
type Direction int

// Directions. Port A is the side of the DUT's input (198.18.0.0/16 in the
// RFC 2544 Appendix C plan); port B is its output side (198.19.0.0/16).
const (
	AtoB Direction = iota + 1
	BtoA
)

func (d Direction) String() string {
	switch d {
	case AtoB:
		return "A->B"
	case BtoA:
		return "B->A"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// MarshalText implements encoding.TextMarshaler.
func (d Direction) MarshalText() ([]byte, error) {
	switch d {
	case AtoB, BtoA:
		return []byte(d.String()), nil
	}
	return nil, fmt.Errorf("invalid direction %d", int(d))
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Direction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "A->B":
		*d = AtoB
	case "B->A":
		*d = BtoA
	default:
		return fmt.Errorf("invalid direction %q: want A->B or B->A", b)
	}
	return nil
}

// Stream is one flow of test frames from one port to the other. A trial with
// two streams of opposite directions is bidirectional (RFC 2544 §14).
type Stream struct {
	// ID identifies the stream in the test signature; unique within a trial.
	ID uint16 `json:"id"`
	// Direction is which port sends.
	Direction Direction `json:"direction"`
	// Flows is the number of distinct UDP port pairs the stream cycles
	// through so a multi-queue DUT spreads the load (RSS). Zero or one is a
	// single flow.
	Flows int `json:"flows,omitempty"`
}

// Spec is one trial: learning, then traffic on every stream, then a settle
// wait for late frames (RFC 2544 §23).
type Spec struct {
	// FrameSize is the RFC 2544 frame size in bytes, FCS included, or a
	// frame-size mix's code (framing.SizeIMIX): each stream then sends the
	// mix's sizes in its repeating pattern (frame n has size
	// Pattern()[n mod len]) and RateFPS counts frames of every size.
	FrameSize int `json:"frame_size"`
	// IPv6 selects IPv6/UDP test frames; the zero value is IPv4/UDP.
	IPv6 bool `json:"ipv6,omitempty"`
	// Streams are sent at once; each carries RateFPS.
	Streams []Stream `json:"streams"`
	// RateFPS is the intended load of each stream in frames per second.
	// Zero means as fast as the tester can send (only with BurstFrames).
	RateFPS float64 `json:"rate_fps"`
	// Duration is how long traffic runs. Ignored when BurstFrames > 0.
	Duration time.Duration `json:"duration_ns"`
	// BurstFrames, when positive, makes the trial one burst of exactly this
	// many frames per stream at RateFPS (back-to-back, RFC 2544 §26.4).
	BurstFrames int64 `json:"burst_frames,omitempty"`
	// Learning is the wait after learning frames before traffic starts
	// (RFC 2544 §23: 2 s). Zero skips learning frames when the engine has
	// already resolved the DUT's addresses.
	Learning time.Duration `json:"learning_ns,omitempty"`
	// Settle is the wait after the last frame for frames still in flight
	// (RFC 2544 §23: 2 s). Frames arriving later are counted late, and lost.
	Settle time.Duration `json:"settle_ns"`
	// TagAfter, when positive, marks the first frame sent at or after this
	// offset from the start of traffic as the latency-tagged frame
	// (RFC 2544 §26.2); its latency is reported in StreamResult.TaggedLatency.
	TagAfter time.Duration `json:"tag_after_ns,omitempty"`
	// RateChange, when set, switches every stream to a new rate part way
	// through (system recovery, RFC 2544 §26.5).
	RateChange *RateChange `json:"rate_change,omitempty"`
	// OnInterval, when set, hears of the trial's progress: an Interval
	// every IntervalPeriod of traffic and a final one after the settle
	// wait (see Interval). The periodic calls come from a goroutine of
	// their own, the final one from the trial's, one call at a time; a
	// slow OnInterval delays the next interval, never the traffic. It is
	// not part of the trial's JSON, nor of Result.Spec.
	OnInterval func(Interval) `json:"-"`
}

// RateChange switches the intended rate at an offset from the start of traffic.
type RateChange struct {
	// At is the offset from the first frame at which the rate changes.
	At time.Duration `json:"at_ns"`
	// RateFPS is the new intended rate of each stream.
	RateFPS float64 `json:"rate_fps"`
}

// Validate checks the parts of a Spec every engine relies on. Engines check
// frame sizes against their own templates and MTUs.
func (s Spec) Validate() error {
	if s.FrameSize <= 0 && !framing.IsMix(s.FrameSize) {
		return fmt.Errorf("trial frame_size %d: must be a positive number of bytes, e.g. 64, or a mix's code (framing.SizeIMIX)", s.FrameSize)
	}
	if len(s.Streams) == 0 {
		return errors.New("trial streams: at least one stream is needed")
	}
	seen := map[uint16]bool{}
	for _, st := range s.Streams {
		if seen[st.ID] {
			return fmt.Errorf("trial streams: stream id %d used twice", st.ID)
		}
		seen[st.ID] = true
		if st.Direction != AtoB && st.Direction != BtoA {
			return fmt.Errorf("trial stream %d direction: want A->B or B->A", st.ID)
		}
		if st.Flows < 0 {
			return fmt.Errorf("trial stream %d flows %d: must be 0 or more", st.ID, st.Flows)
		}
	}
	if s.RateFPS < 0 {
		return fmt.Errorf("trial rate_fps %g: must not be negative", s.RateFPS)
	}
	if s.BurstFrames < 0 {
		return fmt.Errorf("trial burst_frames %d: must not be negative", s.BurstFrames)
	}
	if s.BurstFrames == 0 {
		if s.Duration <= 0 {
			return fmt.Errorf("trial duration %v: must be positive, e.g. 60s", s.Duration)
		}
		if s.RateFPS == 0 {
			return errors.New("trial rate_fps: a timed trial needs a positive rate")
		}
	}
	if s.Settle < 0 || s.Learning < 0 || s.TagAfter < 0 {
		return errors.New("trial learning, settle and tag_after must not be negative")
	}
	if rc := s.RateChange; rc != nil && (rc.At <= 0 || rc.RateFPS <= 0) {
		return fmt.Errorf("trial rate_change: at (%v) and rate_fps (%g) must be positive", rc.At, rc.RateFPS)
	}
	return nil
}
