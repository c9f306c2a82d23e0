//go:build linux

package afxdp

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// pair is a veth pair between two network namespaces the test created:
// A (198.18.0.1/24) and B (198.18.0.2/24), static neighbours both ways.
type pair struct {
	nsA, nsB   string
	ifA, ifB   string
	macA, macB net.HardwareAddr
}

// newPair builds a pair and deletes its namespaces when the test ends.
// Without root it skips with the reason.
func newPair(t testing.TB) *pair {
	t.Helper()
	return newPairQueues(t, 0)
}

// newPairQueues is newPair with queues transmit and receive queues on each
// end (0: the kernel's default, one).
func newPairQueues(t testing.TB, queues int) *pair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("afxdp lab tests need root (network namespaces, AF_XDP, XDP programs); run them as root")
	}
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	id := fmt.Sprintf("%d-%06x", os.Getpid()%100000, h.Sum32()&0xFFFFFF)
	p := &pair{nsA: "xa" + id, nsB: "xb" + id, ifA: "xa0", ifB: "xb0"}
	t.Cleanup(func() {
		for _, n := range []string{p.nsA, p.nsB} {
			if err := netns.DeleteNamed(n); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("delete namespace %s: %v", n, err)
			}
		}
	})
	handles := make([]netns.NsHandle, 2)
	for i, n := range []string{p.nsA, p.nsB} {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
			h, err := netns.NewNamed(n)
			handles[i] = h
			done <- err
		}()
		if err := <-done; err != nil {
			t.Fatalf("create namespace %s: %v", n, err)
		}
		defer handles[i].Close()
	}
	ha, err := netlink.NewHandleAt(handles[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	hb, err := netlink.NewHandleAt(handles[1])
	if err != nil {
		t.Fatal(err)
	}
	defer hb.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: p.ifA, NumTxQueues: queues, NumRxQueues: queues}, PeerName: p.ifB,
		PeerNamespace: netlink.NsFd(int(handles[1]))}
	if err := ha.LinkAdd(veth); err != nil {
		t.Fatalf("create veth: %v", err)
	}
	for _, s := range []struct {
		h    *netlink.Handle
		name string
		addr string
		mac  *net.HardwareAddr
	}{{ha, p.ifA, "198.18.0.1/24", &p.macA}, {hb, p.ifB, "198.18.0.2/24", &p.macB}} {
		l, err := s.h.LinkByName(s.name)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := netlink.ParseAddr(s.addr)
		a.Flags = unix.IFA_F_NODAD
		if err := s.h.AddrAdd(l, a); err != nil {
			t.Fatalf("address %s on %s: %v", s.addr, s.name, err)
		}
		if err := s.h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		lo, err := s.h.LinkByName("lo")
		if err == nil {
			_ = s.h.LinkSetUp(lo)
		}
		*s.mac = l.Attrs().HardwareAddr
	}
	return p
}

// setMTU sets both ends' MTU (bytes of IP packet) to carry frames of size
// bytes, FCS included.
func (p *pair) setMTU(t testing.TB, size int) {
	t.Helper()
	for _, s := range []struct{ ns, ifname string }{{p.nsA, p.ifA}, {p.nsB, p.ifB}} {
		h, err := netns.GetFromName(s.ns)
		if err != nil {
			t.Fatal(err)
		}
		nh, err := netlink.NewHandleAt(h)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		l, err := nh.LinkByName(s.ifname)
		if err == nil {
			err = nh.LinkSetMTU(l, size-18)
		}
		nh.Close()
		if err != nil {
			t.Fatalf("mtu %d on %s: %v", size-18, s.ifname, err)
		}
	}
}
