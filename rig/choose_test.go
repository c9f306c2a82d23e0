package rig

import (
	"errors"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestChoose: --transport auto picks xdp where the kernel loads its
// program and the frames fit, raw where either fails, udp without layer-2
// access; every other transport is taken as given; the reason says which
// rule chose.
func TestChoose(t *testing.T) {
	head := func() (trials.XDPProbe, error) {
		return trials.XDPProbe{Stamp: "head", Refused: map[string]string{"metadata": "cannot use helper bpf_xdp_adjust_meta#54"}}, nil
	}
	meta := func() (trials.XDPProbe, error) {
		return trials.XDPProbe{Stamp: "metadata", Refused: map[string]string{}}, nil
	}
	none := func() (trials.XDPProbe, error) {
		return trials.XDPProbe{Refused: map[string]string{"metadata": "m", "head": "h", "user": "u"}}, nil
	}
	failed := func() (trials.XDPProbe, error) {
		return trials.XDPProbe{}, errors.New("load xdp program: operation not permitted")
	}
	noProbe := func() (trials.XDPProbe, error) {
		t.Error("the probe ran, but the choice needed none")
		return trials.XDPProbe{}, errors.New("unexpected")
	}
	yes := func() bool { return true }
	no := func() bool { return false }
	iface := []Port{{Side: "a", Interface: "a0"}, {Side: "b", Interface: "b0"}}
	sockets := []Port{{Side: "a", SocketOnly: true}, {Side: "b", SocketOnly: true}}
	plan := func(sizes ...int) rfc2544.Plan { return rfc2544.Plan{FrameSizes: sizes} }
	bigMix := framing.Mix{Name: "big", Parts: []framing.MixPart{{Size: 64, Weight: 7}, {Size: 9000, Weight: 1}}}

	for _, tt := range []struct {
		name      string
		in        ChooseInput
		transport string
		auto      bool
		why       []string // substrings of Why, or of the error when err
		err       bool
	}{
		{"given raw", ChooseInput{Placement: Placement{Transport: Raw, Ports: iface}, ProbeXDP: noProbe}, Raw, false, []string{"--transport raw"}, false},
		{"given xdp, jumbo", ChooseInput{Placement: Placement{Transport: XDP, Ports: iface}, Plan: plan(9018), ProbeXDP: noProbe}, XDP, false, []string{"--transport xdp"}, false},
		{"given sim", ChooseInput{Placement: Placement{Transport: Sim}, ProbeXDP: noProbe}, Sim, false, []string{"--transport sim"}, false},
		{"agent", ChooseInput{Placement: Placement{Transport: UDP, Agent: &Agent{}}, ProbeXDP: noProbe}, UDP, false, []string{"remote agent"}, false},
		{"auto: xdp, head stamp", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64, 1518), ProbeXDP: head, Root: yes}, XDP, true,
			[]string{"auto:", `stamped "head"`, "metadata refused", "bpf_xdp_adjust_meta"}, false},
		{"auto: xdp, metadata stamp", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), ProbeXDP: meta, Root: yes}, XDP, true,
			[]string{`stamped "metadata"`}, false},
		{"auto: imix fits", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(framing.SizeIMIX), ProbeXDP: head, Root: yes}, XDP, true, nil, false},
		{"auto: jumbo", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64, 9018), ProbeXDP: noProbe, Root: yes}, Raw, true,
			[]string{"9018-byte frames", "at most 1780"}, false},
		{"auto: a mix with a jumbo part", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: rfc2544.Plan{FrameSizes: []int{64}, Mixes: []framing.Mix{bigMix}}, ProbeXDP: noProbe, Root: yes}, Raw, true,
			[]string{"9000-byte frames"}, false},
		{"auto: probe failed", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), ProbeXDP: failed, Root: yes}, Raw, true,
			[]string{"does not run the xdp transport", "operation not permitted"}, false},
		{"auto: every variant refused", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), ProbeXDP: none, Root: yes}, Raw, true,
			[]string{"refuses every", "metadata refused: m", "head refused: h", "user refused: u"}, false},
		{"auto: addresses only", ChooseInput{Placement: Placement{Transport: Auto, Ports: sockets}, Plan: plan(64), ProbeXDP: noProbe, Root: yes}, UDP, true,
			[]string{"addresses"}, false},
		{"auto: not root", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), ProbeXDP: noProbe, Root: no}, UDP, true,
			[]string{"not root", "CAP_NET_RAW"}, false},
		{"auto: raw calibration", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), Calibration: Raw, ProbeXDP: noProbe, Root: yes}, Raw, false,
			[]string{"--calibration", "raw transport"}, false},
		{"auto: xdp calibration", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), Calibration: XDP, ProbeXDP: noProbe, Root: yes}, XDP, false,
			[]string{"--calibration", "xdp transport"}, false},
		{"auto: udp calibration", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), Calibration: UDP, ProbeXDP: noProbe, Root: yes}, "", false,
			[]string{"--calibration", "udp"}, true},
		{"auto: two queues, xdp", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(64), Queues: 2, ProbeXDP: head, Root: yes}, XDP, true, nil, false},
		{"auto: two queues, jumbo", ChooseInput{Placement: Placement{Transport: Auto, Ports: iface}, Plan: plan(9018), Queues: 2, ProbeXDP: noProbe, Root: yes}, "", false,
			[]string{"--queues 2", "chose raw", "9018-byte", "drop --queues"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Choose(tt.in)
			if tt.err {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("got %+v, %v; want an InputError", c, err)
				}
				for _, w := range tt.why {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Transport != tt.transport || c.Auto != tt.auto {
				t.Errorf("got %s (auto %v), want %s (auto %v); why: %s", c.Transport, c.Auto, tt.transport, tt.auto, c.Why)
			}
			for _, w := range tt.why {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q lacks %q", c.Why, w)
				}
			}
		})
	}
}

// TestPlaceDefaultsToAuto: no --transport is auto, and auto between two
// addresses places them as the udp transport's.
func TestPlaceDefaultsToAuto(t *testing.T) {
	pl, err := Place(Where{PortA: PortInput{Addr: "198.18.1.2"}, PortB: PortInput{Addr: "198.18.2.2"}})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Transport != Auto || len(pl.Ports) != 2 || !pl.Ports[0].SocketOnly || !pl.Ports[1].SocketOnly {
		t.Fatalf("got %+v, want auto with two socket-only ports", pl)
	}
	c, err := Choose(ChooseInput{Placement: pl, Plan: rfc2544.Plan{FrameSizes: []int{64}}, Root: func() bool { return true }})
	if err != nil || c.Transport != UDP {
		t.Errorf("got %+v, %v; want udp", c, err)
	}
	if _, err := Place(Where{Transport: "dpdk", Lab: true}); err == nil || !strings.Contains(err.Error(), "auto (the default") {
		t.Errorf("unknown transport: %v; want the list with auto", err)
	}
}
