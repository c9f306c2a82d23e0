// Package trialstest holds checks the lab tests of package trials and of
// the agent share.
package trialstest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/truth"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
)

// CheckWindowBound records, in claim c, a transfer run with a window below
// the BDP (bdp, bytes) through the relay lab of one-way delay d: the
// window the receiver advertised stayed under the BDP (or the test fails),
// and the throughput is that window (its mean over the transfer) over the
// round trip the lab sets, 2d, within −10 % − the relay's own delay under
// load (a process on the tester's two CPUs: at most 2 ms more per round
// trip) … +10 %. name prefixes the messages.
func CheckWindowBound(c *truth.Claim, t testing.TB, name string, run trials.TCPRun, bdp float64, d time.Duration) {
	t.Helper()
	var peer, sum int64
	for _, s := range run.Samples {
		peer = max(peer, s.PeerWindowBytes)
		sum += s.PeerWindowBytes
		t.Logf("%s  %.1f s: %.2f Mbit/s, rtt %v, cwnd %d B, peer window %d B", name, s.AtS, s.Bps/1e6, time.Duration(s.RTTNs), s.CwndBytes, s.PeerWindowBytes)
	}
	if peer <= 0 || float64(peer) >= bdp {
		t.Fatalf("%s advertised window %d B: not below the BDP %.0f B; the test cannot check the window-bound throughput", name, peer, bdp)
	}
	window := float64(sum) / float64(len(run.Samples))
	rtt := 2 * d
	want := window * 8 / rtt.Seconds()
	t.Logf("%s window-bound: advertised window %.0f B on average (BDP %.0f B), mean RTT %v (the lab's %v): %.2f Mbit/s, window/RTT = %.2f Mbit/s",
		name, window, bdp, time.Duration(run.MeanRTTNs), rtt, run.Bps/1e6, want/1e6)
	c.Ratio(name+"window-bound throughput / (window / 2D)", fmt.Sprintf("window %.0f B, D %v", window, d), want, run.Bps,
		0.9*rtt.Seconds()/(rtt+2*time.Millisecond).Seconds(), 1.1)
}

// TCPClaims records an RFC 6349 test's claims: the idle RTT is the lab's
// 2D (+2 ms at most), the throughput 90…101 % of RFC 6349's maximum, the
// transfer time ratio at most 1.15.
func TCPClaims(c *truth.Claim, name, kase string, rttNs int64, d time.Duration, pc, ttr float64) {
	c.Within(name+"idle RTT − 2D, ms", kase, float64(rttNs-int64(2*d))/1e6, 0, 2)
	c.Within(name+"throughput, % of the RFC 6349 maximum", kase, pc, 90, 101)
	c.Within(name+"transfer time ratio", kase, ttr, 1, 1.15)
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
