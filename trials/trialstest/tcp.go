// Package trialstest holds checks the lab tests of package trials and of
// the agent share.
package trialstest

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// CheckWindowBound checks a transfer run with a window below the BDP (bdp,
// bytes): the window the receiver advertised stayed under the BDP, and the
// throughput is that window over the RTT the transfer saw
// (TCPRun.WindowBps) within 10 %. Not the idle baseline RTT: the relay DUT,
// a process on the tester's two CPUs, adds 0.6-2 ms under load
// (2026-12-01), which the window-bound transfer pays on every round trip.
// name prefixes the messages.
func CheckWindowBound(t testing.TB, name string, run trials.TCPRun, bdp float64, baseline time.Duration) {
	t.Helper()
	var peer int64
	for _, s := range run.Samples {
		peer = max(peer, s.PeerWindowBytes)
		t.Logf("%s  %.1f s: %.2f Mbit/s, rtt %v, cwnd %d B, peer window %d B", name, s.AtS, s.Bps/1e6, time.Duration(s.RTTNs), s.CwndBytes, s.PeerWindowBytes)
	}
	want := run.WindowBps()
	t.Logf("%s window-bound: advertised window up to %d B (BDP %.0f B), mean RTT %v (baseline %v): %.2f Mbit/s, window/RTT = %.2f Mbit/s (%.1f %%)",
		name, peer, bdp, time.Duration(run.MeanRTTNs), baseline, run.Bps/1e6, want/1e6, 100*run.Bps/want)
	if peer <= 0 || float64(peer) >= bdp {
		t.Fatalf("%s advertised window %d B: not below the BDP %.0f B; the test cannot check the window-bound throughput", name, peer, bdp)
	}
	if run.Bps < 0.9*want || run.Bps > 1.1*want {
		t.Errorf("%s window %d B: %.2f Mbit/s, want window/RTT = %.2f Mbit/s ±10 %%", name, peer, run.Bps/1e6, want/1e6)
	}
}

// RelayTCPLab makes the lab of the TCP tests: the relay DUT shaped to R
// (drawn from rng, 20–100 Mbit/s) with a one-way delay D (5–15 ms, drawn
// next) each way.
func RelayTCPLab(t *testing.T, rng *rand.Rand) (st *lab.State, rateBps uint64, delay time.Duration) {
	t.Helper()
	rateBps = uint64(20e6+rng.Float64()*80e6) / 1000 * 1000
	delay = time.Duration(5+rng.IntN(11)) * time.Millisecond
	t.Logf("relay shaped to %d bit/s with a %v delay each way", rateBps, delay)
	st = labtest.New(t, lab.Config{DUT: lab.DUTRelay, Delay: delay, AtoB: lab.Shaping{RateBps: rateBps}, BtoA: lab.Shaping{RateBps: rateBps}})
	return st, rateBps, delay
}

// TCPPairOf is the TCP pair from a lab's port A to its port B (IPv4).
func TCPPairOf(st *lab.State) trials.TCPPair {
	return trials.TCPPair{Base: trials.TCPConfig{
		Sender:   trials.TCPEnd{Namespace: st.A.Namespace, Addr: st.A.IPv4.Addr()},
		Receiver: trials.TCPEnd{Namespace: st.B.Namespace, Addr: st.B.IPv4.Addr()},
	}}
}
