package rfc2544

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/trials"
)

// asymDUT forwards up to capFPS[direction] frames per second in each
// direction and drops the excess, exactly.
type asymDUT struct{ capFPS map[trials.Direction]float64 }

func (d asymDUT) Run(_ context.Context, spec trials.Spec) (trials.Result, error) {
	res := trials.Result{Spec: spec, Paths: trials.Paths{Transport: "sim"}}
	for _, s := range spec.Streams {
		n := uint64(spec.RateFPS * spec.Duration.Seconds())
		if spec.BurstFrames > 0 {
			n = uint64(spec.BurstFrames)
		}
		recv := n
		if c := d.capFPS[s.Direction]; spec.RateFPS > c {
			recv = uint64(float64(n) * c / spec.RateFPS)
		}
		res.Streams = append(res.Streams, trials.StreamResult{ID: s.ID, Direction: s.Direction, IntendedFPS: spec.RateFPS,
			OfferedFPS: spec.RateFPS, TxSeconds: spec.Duration.Seconds(), Sent: n, Received: recv, Lost: n - recv,
			TaggedLatencyNs: -1, LastLossNs: -1})
	}
	return res, nil
}

// TestBidirectionalPerDirection: on a DUT that forwards 60 % of line rate
// A->B and 30 % B->A, the bidirectional search finds the slower direction
// (a bidirectional trial passes only if both do), Directions reports each
// direction's offered and received rates in that trial, and per_direction
// searches find each direction's own rate alone.
func TestBidirectionalPerDirection(t *testing.T) {
	const size = 512
	p := testPlan([]Test{TestThroughput}, size)
	p.Bidirectional = true
	p.NoProbe = true
	p.Throughput.ResolutionPercent = 0.1
	lr := 1e9 / float64((size+20)*8)
	dut := asymDUT{capFPS: map[trials.Direction]float64{trials.AtoB: 0.6 * lr, trials.BtoA: 0.3 * lr}}
	tests := []struct {
		name         string
		perDirection bool
	}{{name: "joint only"}, {name: "per direction", perDirection: true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := p
			p.Throughput.PerDirection = tt.perDirection
			r := &Runner{Tester: dut, Plan: p, Sleep: noSleep}
			res, err := r.Throughput(context.Background(), size)
			if err != nil {
				t.Fatal(err)
			}
			near := func(got, want float64) bool { return math.Abs(got-want) <= 0.002*lr }
			if !res.Found || !near(res.FPS/2, 0.3*lr) {
				t.Errorf("bidirectional throughput %.0f fps per stream, want about %.0f (the B->A cap)", res.FPS/2, 0.3*lr)
			}
			var dirs []trials.Direction
			for _, d := range res.Directions {
				dirs = append(dirs, d.Direction)
				if !near(d.OfferedFPS, 0.3*lr) || !near(d.ReceivedFPS, d.OfferedFPS) {
					t.Errorf("%v: offered %.0f received %.0f fps, want both about %.0f", d.Direction, d.OfferedFPS, d.ReceivedFPS, 0.3*lr)
				}
				if !tt.perDirection {
					if d.Alone != nil {
						t.Errorf("%v: a per-direction search ran without per_direction", d.Direction)
					}
					continue
				}
				if d.Alone == nil {
					t.Fatalf("%v: no per-direction search", d.Direction)
				}
				want := dut.capFPS[d.Direction]
				if !d.Alone.Found || !near(d.Alone.FPS, want) {
					t.Errorf("%v alone: throughput %.0f fps, want about %.0f", d.Direction, d.Alone.FPS, want)
				}
				for _, tr := range d.Alone.Trials {
					if s := tr.Result.Spec.Streams; len(s) != 1 || s[0].Direction != d.Direction {
						t.Fatalf("%v alone: trial streams %+v, want one stream %v", d.Direction, s, d.Direction)
					}
				}
			}
			if diff := cmp.Diff([]trials.Direction{trials.AtoB, trials.BtoA}, dirs); diff != "" {
				t.Errorf("directions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPerDirectionNeedsBidirectional(t *testing.T) {
	p := testPlan([]Test{TestThroughput}, 64)
	p.Throughput.PerDirection = true
	err := p.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "throughput.per_direction") || !strings.Contains(err.Error(), "bidirectional: true") {
		t.Fatalf("Validate: %v, want an error naming throughput.per_direction and the fix", err)
	}
}
