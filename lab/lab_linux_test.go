package lab_test

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// udpIn opens a UDP socket bound to addr inside namespace ns.
func udpIn(t *testing.T, ns string, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	err := nsutil.Do(ns, func() error {
		var err error
		c, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(addr))
		return err
	})
	if err != nil {
		t.Fatalf("udp socket on %v in %s: %v", addr, ns, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// setDF makes the socket refuse to fragment (IP_PMTUDISC_DO).
func setDF(t *testing.T, c *net.UDPConn, v6 bool) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	rc.Control(func(fd uintptr) {
		if v6 {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_MTU_DISCOVER, syscall.IPV6_PMTUDISC_DO)
		} else {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MTU_DISCOVER, syscall.IP_PMTUDISC_DO)
		}
	})
	if serr != nil {
		t.Fatal(serr)
	}
}

// deliver sends one datagram of payload bytes from A to B and reports
// whether it arrived (within wait).
func deliver(t *testing.T, st *lab.State, v6 bool, payload int, wait time.Duration) bool {
	t.Helper()
	src, dst := st.A.IPv4.Addr(), st.B.IPv4.Addr()
	if v6 {
		src, dst = st.A.IPv6.Addr(), st.B.IPv6.Addr()
	}
	rx := udpIn(t, st.B.Namespace, netip.AddrPortFrom(dst, 0))
	tx := udpIn(t, st.A.Namespace, netip.AddrPortFrom(src, 0))
	setDF(t, tx, v6)
	buf := make([]byte, payload)
	// The first datagram may wait for ARP/ND; retry a few times.
	for i := 0; i < 5; i++ {
		_, err := tx.WriteToUDPAddrPort(buf, rx.LocalAddr().(*net.UDPAddr).AddrPort())
		if errors.Is(err, syscall.EMSGSIZE) {
			return false
		}
		if err != nil {
			t.Fatalf("send %d bytes: %v", payload, err)
		}
		rx.SetReadDeadline(time.Now().Add(wait))
		rb := make([]byte, 70000)
		n, _, err := rx.ReadFromUDPAddrPort(rb)
		if err == nil {
			if n != payload {
				t.Fatalf("received %d bytes, sent %d", n, payload)
			}
			return true
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal(err)
		}
	}
	return false
}

func TestRouterForwards(t *testing.T) {
	st := labtest.New(t, lab.Config{})
	before, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	for _, v6 := range []bool{false, true} {
		if !deliver(t, st, v6, 100, 300*time.Millisecond) {
			t.Errorf("v6=%v: datagram from A did not reach B through the DUT", v6)
		}
	}
	after, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	if after.Forwarded4 <= before.Forwarded4 || after.Forwarded6 <= before.Forwarded6 {
		t.Errorf("DUT forwarding counters did not move: before %+v after %+v", before, after)
	}
	loaded, err := lab.Load(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.A.MAC.String() != st.A.MAC.String() || loaded.B.IPv4 != st.B.IPv4 || loaded.DUTNamespace != st.DUTNamespace {
		t.Errorf("Load = %+v, Up returned %+v", loaded, st)
	}
}

func TestMTU(t *testing.T) {
	tests := []struct {
		name       string
		mtuA, mtuB int
		payload    int // UDP payload; IP packet = payload+28 (v4)
		want       bool
	}{
		{name: "9000 passes jumbo", mtuA: 9000, mtuB: 9000, payload: 9000 - 28, want: true},
		{name: "1500 refuses jumbo", mtuA: 1500, mtuB: 1500, payload: 9000 - 28, want: false},
		{name: "1500 passes 1500", mtuA: 1500, mtuB: 1500, payload: 1500 - 28, want: true},
		{name: "9000 to 1500 drops jumbo at DUT", mtuA: 9000, mtuB: 1500, payload: 9000 - 28, want: false},
		{name: "9000 to 1500 passes 1500", mtuA: 9000, mtuB: 1500, payload: 1500 - 28, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := labtest.New(t, lab.Config{MTUA: tt.mtuA, MTUB: tt.mtuB})
			if got := deliver(t, st, false, tt.payload, 200*time.Millisecond); got != tt.want {
				t.Errorf("%d-byte IP packet through MTU %d/%d: delivered %v, want %v", tt.payload+28, tt.mtuA, tt.mtuB, got, tt.want)
			}
		})
	}
}

func TestLoopTopology(t *testing.T) {
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	if st.DUTNamespace != "" {
		t.Errorf("loop lab has DUT namespace %q", st.DUTNamespace)
	}
	for _, v6 := range []bool{false, true} {
		if !deliver(t, st, v6, 100, 300*time.Millisecond) {
			t.Errorf("v6=%v: datagram from A did not reach B over the loop", v6)
		}
	}
}
