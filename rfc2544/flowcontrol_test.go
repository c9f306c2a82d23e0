package rfc2544

import (
	"context"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// pushBack is a DUT that forwards at most capFPS and holds the tester back
// above that (flow control): the offered load is what it accepts, and it
// loses nothing. With lossAbove > 0 it also drops that share of what it
// accepts when pushed.
type pushBack struct {
	capFPS    float64
	lossAbove float64
}

func (d pushBack) Run(ctx context.Context, s trials.Spec) (trials.Result, error) {
	var res trials.Result
	secs := s.Duration.Seconds()
	for _, st := range s.Streams {
		offered := min(s.RateFPS, d.capFPS)
		sent := uint64(offered * secs)
		r := trials.StreamResult{ID: st.ID, Direction: st.Direction, IntendedFPS: s.RateFPS, OfferedFPS: offered,
			TxSeconds: secs, Sent: sent, Received: sent, TaggedLatencyNs: -1, LastLossNs: -1}
		if s.RateFPS > d.capFPS {
			r.Received = sent - uint64(float64(sent)*d.lossAbove)
			res.FlowControlled = true
			res.FlowControlReason = trials.FlowControlNote(offered) + " (port A: the kernel refused 100 of 1000 transmit calls)"
		}
		r.Lost = r.Sent - r.Received
		res.Streams = append(res.Streams, r)
	}
	res.Spec = s
	return res, nil
}

// TestThroughputFlowControlled: a DUT that holds the tester back reports its
// accepted rate as its throughput, with the flow-control note, and is never
// tester-limited.
func TestThroughputFlowControlled(t *testing.T) {
	const capFPS = 24457
	p := testPlan([]Test{TestThroughput}, 64)
	p.NoProbe = true
	r := &Runner{Tester: pushBack{capFPS: capFPS}, Plan: p, Sleep: noSleep}
	res, err := r.Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(logTable(res.Trials))
	if !res.Found || res.TesterLimited {
		t.Fatalf("found %v tester-limited %v: want the DUT's throughput", res.Found, res.TesterLimited)
	}
	if res.FPS < capFPS*0.99 || res.FPS > capFPS {
		t.Errorf("throughput %.0f fps, want the accepted %d fps", res.FPS, capFPS)
	}
	if !strings.HasPrefix(res.Note, "flow-controlled: the DUT held the tester back at ") {
		t.Errorf("note %q", res.Note)
	}
	for _, tr := range res.Trials {
		if tr.Outcome == OutcomeTesterLimited {
			t.Errorf("step %d tester-limited", tr.Step)
		}
	}

	// Held back and lossy: a fail at the offered load, the search goes
	// below it.
	r = &Runner{Tester: pushBack{capFPS: capFPS, lossAbove: 0.01}, Plan: p, Sleep: noSleep}
	res, err = r.Throughput(context.Background(), 64)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.TesterLimited || res.FPS > capFPS {
		t.Errorf("lossy push-back: found %v tester-limited %v throughput %.0f fps; want at most %d", res.Found, res.TesterLimited, res.FPS, capFPS)
	}
}
