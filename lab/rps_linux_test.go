package lab_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// portTxDropped reads tx_dropped of a tester port (a veth counts a frame
// its peer's CPU backlog refused there).
func portTxDropped(t *testing.T, p lab.Port) uint64 {
	t.Helper()
	h, err := netns.GetFromName(p.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	l, err := nh.LinkByName(p.Interface)
	if err != nil {
		t.Fatal(err)
	}
	return l.Attrs().Statistics.TxDropped
}

// TestRPSDropsWhenOverrun overruns a slow DUT (a long firewall rule set)
// with and without RPS. Without it the DUT's work runs on the sender's CPU
// inside sendto, so the sender slows to the DUT's pace and nothing is
// dropped; with it the sender runs free and the DUT drops what it cannot
// forward, as hardware does. Every frame is accounted for by the DUT's
// counters either way. Truth claim "lab-rps".
func TestRPSDropsWhenOverrun(t *testing.T) {
	c := truth.New(t, "lab-rps")
	type result struct {
		sendFPS, recvFPS float64
		dropped          uint64
	}
	run := func(t *testing.T, noRPS bool) result {
		st := labtest.New(t, lab.Config{FWRules: 3000, NoRPS: noRPS})
		if !noRPS && len(st.DUTCPUs) == 0 {
			t.Skip("one CPU: RPS has nowhere to steer the DUT")
		}
		warm(t, st, false)
		before, err := st.DUTCounters()
		if err != nil {
			t.Fatal(err)
		}
		txDrop0 := portTxDropped(t, st.A)
		rx := newSink(t, st.B.Namespace, st.B.IPv4.Addr())
		tx := newSource(t, st.A.Namespace, st.A.IPv4.Addr())
		tx.avoid = []int{runtime.NumCPU() - 1} // where RPS puts the DUT
		sent, took := tx.send(t, rx.addr(), 20000, 18, 0)
		got := rx.stop(100 * time.Millisecond)
		after, err := st.DUTCounters()
		if err != nil {
			t.Fatal(err)
		}
		r := result{sendFPS: float64(sent) / took.Seconds(), dropped: after.DutA.RxDropped - before.DutA.RxDropped}
		// Every frame is accounted for: received, or dropped at the DUT's
		// ingress, or refused by B's backlog (counted on dut-b). The drop
		// counters may also hold a few ARP/ND frames.
		egress := after.DutB.TxDropped - before.DutB.TxDropped
		if n := uint64(len(got)) + r.dropped + egress; n < uint64(sent) || n > uint64(sent)+10 {
			t.Errorf("sent %d != received %d + DUT ingress drops %d + B backlog drops %d", sent, len(got), r.dropped, egress)
		}
		if len(got) > 1 {
			r.recvFPS = float64(len(got)-1) / got[len(got)-1].at.Sub(got[0].at).Seconds()
		}
		t.Logf("RPS %v: sent %d at %.0f fps, received %d at %.0f fps; DUT ingress drops %d (tester port tx_dropped %d)",
			!noRPS, sent, r.sendFPS, len(got), r.recvFPS, r.dropped, portTxDropped(t, st.A)-txDrop0)
		return r
	}
	var with, without result
	if !t.Run("without RPS", func(t *testing.T) { without = run(t, true) }) ||
		!t.Run("with RPS", func(t *testing.T) { with = run(t, false) }) || with.sendFPS == 0 {
		return
	}
	k := "3000 rules, 64 B"
	c.Within("frames the DUT dropped without RPS (back-pressure)", k, float64(without.dropped), 0, 0)
	c.Within("frames the overrun DUT dropped with RPS", k, float64(with.dropped), 1, math.Inf(1))
	c.Within("sender's rate with RPS / without", k, with.sendFPS/without.sendFPS, 2, math.Inf(1))
}
