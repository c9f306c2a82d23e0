package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// newTestNS creates a network namespace named after the test and the
// process, with a veth pair d0 (198.18.1.2/24, carrying the namespace's
// default route via 198.18.1.1) and d1 (198.19.1.2/24). It is deleted when
// the test ends. The tests only inspect it; nothing is sent.
func newTestNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root; run the tests as root")
	}
	name := fmt.Sprintf("r2544cli-%d", os.Getpid())
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	ns, err := netns.NewNamed(name) // switches this thread into it
	if serr := netns.Set(orig); serr != nil {
		t.Fatalf("return to the original namespace: %v", serr) // thread stays locked: discarded
	}
	orig.Close()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		ns.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "d0"}, PeerName: "d1"}); err != nil {
		t.Fatalf("add veth d0-d1: %v", err)
	}
	for _, d := range []struct{ name, addr string }{{"d0", "198.18.1.2/24"}, {"d1", "198.19.1.2/24"}} {
		link, err := h.LinkByName(d.name)
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := netlink.ParseAddr(d.addr)
		if err := h.AddrAdd(link, addr); err != nil {
			t.Fatalf("address %s: %v", d.name, err)
		}
		if err := h.LinkSetUp(link); err != nil {
			t.Fatalf("up %s: %v", d.name, err)
		}
	}
	d0, err := h.LinkByName("d0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: d0.Attrs().Index, Gw: net.ParseIP("198.18.1.1")}); err != nil {
		t.Fatalf("default route: %v", err)
	}
	return name
}

// TestDefaultRoutePort checks the RFC 6815 rule that a port carrying the
// default route is refused unless --force, using the netlink route lookup,
// before any tester is opened.
func TestDefaultRoutePort(t *testing.T) {
	ns := newTestNS(t)
	args := []string{"run", "--port-a", "d0", "--netns-a", ns, "--addr-a", "198.18.1.2/24", "--gw-a", "198.18.1.1",
		"--port-b", "d1", "--netns-b", ns, "--addr-b", "198.19.1.2/24", "--gw-b", "198.19.1.1", "--sizes", "64"}

	opens := forbidTraffic(t)
	_, _, err := runCLI(t, context.Background(), args...)
	if err == nil || !strings.Contains(err.Error(), "--port-a d0: carries the default route") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("got %v, want port a refused for carrying the default route", err)
	}
	// Port B does not carry it, and with --force port A passes; a veth has
	// no line rate, so the nominal 1 Gbit/s is used and said.
	stdout, _, err := runCLI(t, context.Background(), append(args, "--force", "--dry-run")...)
	if err != nil {
		t.Fatalf("with --force: %v", err)
	}
	for _, want := range []string{"link_bps: 1e+09", "d0 is a veth: nominal 1 Gbit/s", "# port A: d0 (netns " + ns + ")"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if *opens != 0 {
		t.Errorf("a tester was opened %d times", *opens)
	}
}
