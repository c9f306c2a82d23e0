package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

func TestPolicyCheck(t *testing.T) {
	p := Policy{MaxRateBps: 1e9, MaxDuration: time.Minute, ClockSync: ClockNone}
	// 1 Gbit/s of 1518-byte frames is 81274 fps (L1: 1538 bytes a frame).
	base := func(mod func(*wire.TrialSetup)) wire.TrialSetup {
		s := wire.TrialSetup{TrialID: 3, Spec: trials.Spec{
			FrameSize: 1518,
			Streams:   []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA}},
			RateFPS:   80000, Duration: 30 * time.Second, Settle: 2 * time.Second,
		}, ControllerPort: 40000, Latency: LatencyRoundTrip}
		if mod != nil {
			mod(&s)
		}
		return s
	}
	tests := []struct {
		name   string
		policy Policy
		setup  wire.TrialSetup
		want   string // empty: accepted
	}{
		{name: "within limits", setup: base(nil)},
		{name: "receive only is not capped", setup: base(func(s *wire.TrialSetup) {
			s.Spec.Streams = s.Spec.Streams[:1]
			s.Spec.RateFPS = 1e7
		})},
		{name: "above max rate", setup: base(func(s *wire.TrialSetup) { s.Spec.RateFPS = 90000 }),
			want: "trial 3 asks the agent to send 1.107 Gbit/s (90000 fps of 1518-byte frames: B->A streams and reflected frames), above its --max-rate 1 Gbit/s"},
		{name: "two agent streams add up", setup: base(func(s *wire.TrialSetup) {
			s.Spec.Streams = append(s.Spec.Streams, trials.Stream{ID: 3, Direction: trials.BtoA})
			s.Spec.RateFPS = 50000
		}), want: "100000 fps of 1518-byte frames"},
		{name: "reflection counts", setup: base(func(s *wire.TrialSetup) { s.ReflectFPS = 2000 }), want: "82000 fps"},
		{name: "rate change counts", setup: base(func(s *wire.TrialSetup) {
			s.Spec.RateChange = &trials.RateChange{At: time.Second, RateFPS: 160000}
		}), want: "160000 fps"},
		{name: "as fast as possible", setup: base(func(s *wire.TrialSetup) {
			s.Spec.RateFPS, s.Spec.BurstFrames = 0, 1000
		}), want: "rate_fps 0 (as fast as possible): the agent sends only at an explicit rate"},
		{name: "too long", setup: base(func(s *wire.TrialSetup) { s.Spec.Duration = time.Minute }),
			want: "trial 3 lasts 1m2s (learning, traffic and settle wait), above the agent's --max-duration 1m0s"},
		{name: "long burst", setup: base(func(s *wire.TrialSetup) {
			s.Spec.BurstFrames, s.Spec.RateFPS = 8_000_000, 80000
		}), want: "lasts 1m42s"},
		{name: "privileged controller port", setup: base(func(s *wire.TrialSetup) { s.ControllerPort = 53 }),
			want: "controller_port 53: the agent sends only to UDP ports 1024 and above"},
		{name: "zero controller port", setup: base(func(s *wire.TrialSetup) { s.ControllerPort = 0 }), want: "controller_port 0"},
		{name: "receive only needs no controller port", setup: base(func(s *wire.TrialSetup) {
			s.Spec.Streams, s.ControllerPort = s.Spec.Streams[:1], 0
		})},
		{name: "privileged agent port", setup: base(func(s *wire.TrialSetup) { s.AgentPort = 80 }), want: "agent_port 80"},
		{name: "one-way without ptp", setup: base(func(s *wire.TrialSetup) { s.Latency = LatencyOneWay }),
			want: "latency one-way: the agent's clock is not declared synchronized; measure round trip, or start the agent with --clock-sync ptp"},
		{name: "one-way with ptp", policy: Policy{MaxRateBps: 1e9, MaxDuration: time.Minute, ClockSync: ClockPTP},
			setup: base(func(s *wire.TrialSetup) { s.Latency = LatencyOneWay })},
		{name: "zero policy allows nothing", policy: Policy{}, setup: base(nil), want: "must be set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := p
			if tc.policy != (Policy{}) || tc.name == "zero policy allows nothing" {
				pol = tc.policy
			}
			if err := tc.setup.Validate(); err != nil {
				t.Fatalf("test setup invalid: %v", err)
			}
			err := pol.Check(tc.setup)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("Check accepted, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("Check error %q does not say %q", err, tc.want)
			}
		})
	}
}
