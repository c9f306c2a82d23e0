package rfc2544

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// mtuPort is a Tester whose own port has an MTU, as the raw engine: it
// refuses, before sending, a frame its port cannot carry, with the error
// the engine returns (a *framing.FrameSizeError wrapping ErrAboveMTU).
// plain makes the error a bare wrapped ErrAboveMTU, without the details.
// onlyTimed refuses timed trials only (not the probes' bursts).
type mtuPort struct {
	inner     Tester
	mtu       int
	plain     bool
	onlyTimed bool
	runs      int // trials that reached inner
}

func (m *mtuPort) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	proto := framing.IPv4UDP
	if s.IPv6 {
		proto = framing.IPv6UDP
	}
	if err := framing.ValidateFrameSize(s.FrameSize, proto, false, m.mtu); err != nil && !(m.onlyTimed && s.BurstFrames > 0) {
		if m.plain {
			return trials.Result{Spec: s}, fmt.Errorf("port a: %w", framing.ErrAboveMTU)
		}
		return trials.Result{Spec: s}, fmt.Errorf("port a (mtu %d): %w", m.mtu, err)
	}
	m.runs++
	return m.inner.Run(ctx, s)
}

// TestProbeRefusedByTesterMTU: a size the tester's own port refuses is, for
// the path probe, a size that does not pass the path (§9.4): zero
// throughput with a reason naming the size and the port's limit, and the
// run goes on. The same refusal of any other trial stays an error.
func TestProbeRefusedByTesterMTU(t *testing.T) {
	const reason4096 = "frame size 4096 cannot leave the tester: a tester port's MTU is 1500 (frames of at most 1518 bytes); raise the MTU on every hop to at least 4078; reported as zero throughput (RFC 2544 §9.4)"
	const reason9000 = "frame size 9000 cannot leave the tester: a tester port's MTU is 1500 (frames of at most 1518 bytes); raise the MTU on every hop to at least 8982; reported as zero throughput (RFC 2544 §9.4)"
	tests := []struct {
		name    string
		port    mtuPort
		noProbe bool
		sizes   []int
		// wantErr: the run must fail with an error wrapping ErrAboveMTU.
		wantErr bool
		// reasons are the throughput reasons per size ("" = measured).
		reasons map[int]string
	}{
		{
			name:    "probe turns the refusal into zero throughput",
			port:    mtuPort{mtu: 1500},
			sizes:   []int{1518, 4096, 9000},
			reasons: map[int]string{1518: "", 4096: reason4096, 9000: reason9000},
		},
		{
			name:  "refusal without size details",
			port:  mtuPort{mtu: 1500, plain: true},
			sizes: []int{1518, 4096},
			reasons: map[int]string{1518: "",
				4096: "frame size 4096 cannot leave the tester: probe trial 1 at 4096 bytes, 3.293% of line rate: port a: frame above path mtu; reported as zero throughput (RFC 2544 §9.4)"},
		},
		{
			name:    "no probe: the refusal is an error",
			port:    mtuPort{mtu: 1500},
			noProbe: true,
			sizes:   []int{1518, 4096},
			wantErr: true,
		},
		{
			name:    "refusal of a non-probe trial is an error",
			port:    mtuPort{mtu: 1500, onlyTimed: true},
			sizes:   []int{1518, 4096},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := tt.port
			port.inner = suiteDUT()
			p := testPlan([]Test{TestThroughput, TestLatency}, tt.sizes...)
			p.NoProbe = tt.noProbe
			rec := &recorder{}
			res, err := (&Runner{Tester: &port, Plan: p, Observer: rec, Sleep: noSleep}).Run(context.Background())
			if tt.wantErr {
				if !errors.Is(err, framing.ErrAboveMTU) {
					t.Fatalf("err = %v, want one wrapping framing.ErrAboveMTU", err)
				}
				if res == nil || res.Error == "" {
					t.Errorf("results %+v: want the error recorded", res)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			got := map[int]string{}
			for _, tp := range res.Throughput {
				got[tp.FrameSize] = tp.Reason
				if tp.Reason == "" && (!tp.Found || tp.FPS == 0) {
					t.Errorf("%d bytes: not measured", tp.FrameSize)
				}
				if tp.Reason != "" && (tp.Found || tp.FPS != 0) {
					t.Errorf("%d bytes: found %v at %.0f fps, want zero throughput", tp.FrameSize, tp.Found, tp.FPS)
				}
			}
			if diff := cmp.Diff(tt.reasons, got); diff != "" {
				t.Errorf("throughput reasons (-want +got):\n%s", diff)
			}
			for _, l := range res.Latency {
				if want := tt.reasons[l.FrameSize]; (want == "") != (l.Skipped == "") || !strings.HasSuffix(l.Skipped, want) {
					t.Errorf("latency at %d bytes skipped %q, want it skipped for %q", l.FrameSize, l.Skipped, want)
				}
			}
			for _, pr := range res.Probes {
				if want := tt.reasons[pr.FrameSize]; pr.Passed != (want == "") || pr.Reason != want {
					t.Errorf("probe of %d bytes: passed %v, reason %q; want reason %q", pr.FrameSize, pr.Passed, pr.Reason, want)
				}
				if want := tt.reasons[pr.FrameSize]; want != "" && (pr.Trial.Test != TestProbe || pr.Trial.Sent != 0 || pr.Trial.Received != 0 || len(pr.Trial.Result.Streams) != 1) {
					t.Errorf("refused probe of %d bytes: trial %+v, want a probe trial of one stream that sent nothing", pr.FrameSize, pr.Trial)
				}
			}
			// Every trial started is heard of as finished, the refused
			// probes included, so an observer's journal stays in step.
			if rec.started != res.Trials() || len(rec.finished) != res.Trials() {
				t.Errorf("%d trials started, %d finished, %d in the results; want all equal", rec.started, len(rec.finished), res.Trials())
			}
			if refused := len(tt.sizes) - 1; port.runs != res.Trials()-refused {
				t.Errorf("the tester ran %d trials, want %d (all but the %d refused probes)", port.runs, res.Trials()-refused, refused)
			}
		})
	}
}
