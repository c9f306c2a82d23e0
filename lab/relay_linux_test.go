package lab_test

import (
	"net"
	"net/netip"
	"sort"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// rtts measures n UDP round trips A→B→A through the lab, echoed by B.
func rtts(t *testing.T, st *lab.State, n int) []time.Duration {
	t.Helper()
	echo := udpIn(t, st.B.Namespace, netip.AddrPortFrom(st.B.IPv4.Addr(), 0))
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			echo.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	c := udpIn(t, st.A.Namespace, netip.AddrPortFrom(st.A.IPv4.Addr(), 0))
	dst := echo.LocalAddr().(*net.UDPAddr).AddrPort()
	buf := make([]byte, 2048)
	var out []time.Duration
	// One untimed exchange first: it resolves ARP on both sides.
	for i := 0; i <= n; i++ {
		start := time.Now()
		if _, err := c.WriteToUDPAddrPort([]byte("ping"), dst); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			rs, serr := st.RelayStats()
			t.Fatalf("round trip %d: %v (relay stats %+v %v)", i, err, rs, serr)
		}
		if i > 0 {
			out = append(out, time.Since(start))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func TestRelayDelay(t *testing.T) {
	const delay = 10 * time.Millisecond
	st := labtest.New(t, lab.Config{DUT: lab.DUTRelay, Delay: delay})
	t.Logf("relay ceiling: %.0f fps (saturated %v)", st.RelayCeilingFPS, st.RelaySaturated)
	got := rtts(t, st, 20)
	med := got[len(got)/2]
	t.Logf("round trips with %v one-way relay delay: min %v median %v max %v", delay, got[0], med, got[len(got)-1])
	if want := 2 * delay; med < want || med > want+want/10 {
		t.Errorf("median round trip %v, want %v +10%%", med, want)
	}
	rs, err := st.RelayStats()
	if err != nil {
		t.Fatal(err)
	}
	if rs.AtoB.Forwarded < 21 || rs.BtoA.Forwarded < 21 {
		t.Errorf("relay forwarded %d A→B, %d B→A, want ≥ 21 each: %+v", rs.AtoB.Forwarded, rs.BtoA.Forwarded, rs)
	}
}
