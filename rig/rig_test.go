package rig

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePort(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   PortInput
		want string // substring of the error; "" for none
	}{
		{"good", PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.18.1.1"}, ""},
		{"no interface", PortInput{Addr: "198.18.1.2/24"}, "--port-a: missing"},
		{"no prefix length", PortInput{Interface: "eth1", Addr: "198.18.1.2", Gateway: "198.18.1.1"}, "--addr-a 198.18.1.2: missing the prefix length"},
		{"gateway outside", PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.19.1.1"}, "--gw-a 198.19.1.1: not inside --addr-a"},
		{"gateway is the port", PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.18.1.2"}, "the same as --addr-a"},
		{"v6 without gateway", PortInput{Interface: "eth1", Addr6: "2001:2::2/64"}, "--gw6-a: missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePort("a", tt.in)
			if tt.want == "" {
				if err != nil || p.Gateway != netip.MustParseAddr("198.18.1.1") {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want an InputError with %q", err, tt.want)
			}
		})
	}
}

func TestCheckDestinations(t *testing.T) {
	in := PortInput{Interface: "eth1", Addr: "10.0.0.2/24", Gateway: "10.0.0.1"}
	p, err := ParsePort("b", in)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDestinations([]Port{p}, false); err == nil || !strings.Contains(err.Error(), "--addr-b 10.0.0.2: outside the benchmark ranges") {
		t.Errorf("10.0.0.2: %v, want it refused naming --addr-b", err)
	}
	if err := CheckDestinations([]Port{p}, true); err != nil {
		t.Errorf("allowAny: %v", err)
	}
	u, err := ParseUDPPort("a", PortInput{Addr: "127.0.0.1"}, false)
	if err != nil || CheckDestinations([]Port{u}, false) != nil {
		t.Errorf("udp loopback: %+v, %v; want allowed (it never leaves the host)", u, err)
	}
}

func TestPlace(t *testing.T) {
	ports := func(a, b string) Where {
		return Where{PortA: PortInput{Interface: a, Addr: "198.18.1.2/24", Gateway: "198.18.1.1"},
			PortB: PortInput{Interface: b, Addr: "198.19.1.2/24", Gateway: "198.19.1.1"}}
	}
	for _, tt := range []struct {
		name string
		w    Where
		want string
	}{
		{"two ports", ports("eth1", "eth2"), ""},
		{"same port twice", ports("eth1", "eth1"), "--port-a and --port-b are both eth1"},
		{"nothing", Where{}, "no ports"},
		{"unknown transport", Where{Transport: "dpdk"}, `--transport "dpdk": unknown`},
		{"sim with ports", func() Where { w := ports("eth1", "eth2"); w.Transport = Sim; return w }(), "--transport sim simulates"},
		{"lab setting without a lab", func() Where { w := ports("eth1", "eth2"); w.LabSettings = []string{"--rate"}; return w }(), "--rate: a setting of a temporary lab"},
		{"lab and ports", func() Where { w := ports("eth1", "eth2"); w.Lab = true; return w }(), "choose one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := Place(tt.w)
			if tt.want == "" {
				if err != nil || len(pl.Ports) != 2 || pl.Transport != Auto {
					t.Fatalf("got %+v, %v", pl, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFixLabArg(t *testing.T) {
	got := FixLabArg([]string{"--lab", "--sizes", "64", "--lab", "demo", "--", "--lab"})
	want := []string{"--lab=", "--sizes", "64", "--lab", "demo", "--", "--lab"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestCheckOutFree(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOutFree(filepath.Join(dir, "new"), false); err != nil {
		t.Errorf("new folder: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	if err := CheckOutFree(dir, false); err == nil || !strings.Contains(err.Error(), "exists and is not empty (notes.txt") {
		t.Errorf("folder with other files: %v", err)
	}
	os.WriteFile(filepath.Join(dir, JournalName), nil, 0o644)
	if err := CheckOutFree(dir, false); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("folder with a run: %v", err)
	}
	if err := CheckOutFree(dir, true); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
}
