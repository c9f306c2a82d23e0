package rig

import (
	"errors"
	"fmt"

	"github.com/rfc2544/rfc2544/lab"
)

// Where is how a run's ports are given, as the command's flags give them:
// the simulator, a lab (named, or a temporary one), two interfaces, two
// addresses (the udp transport), or a remote agent (ParseAgent).
type Where struct {
	Transport string // Auto, Raw, UDP, XDP or Sim; "" is Auto
	Lab       bool   // --lab
	LabName   string // --lab NAME; "" with Lab: a temporary lab
	// TempLabConfig gives the temporary lab's settings (lab.Flags.Config).
	TempLabConfig func() (lab.Config, error)
	// LabSettings are the temporary lab's settings that were given, as
	// flags (e.g. "--rate"): an error where no temporary lab is made.
	LabSettings  []string
	PortA, PortB PortInput
	IPv6         bool
	Agent        *Agent // from ParseAgent, with its AgentPorts
	AgentPorts   []Port
}

// Placement is where a run's ports are, checked: Ports (explicit or a named
// lab's), a LabName, or a TempLab to create; none for Sim.
type Placement struct {
	Transport string
	Ports     []Port
	LabName   string
	TempLab   *lab.Config
	// Reference says TempLab is the reference DUT (ReferenceLab): a
	// temporary lab given no setting.
	Reference bool
	Agent     *Agent
}

// Place checks w: one way of giving the ports, each port complete and in
// its family, a named lab that is up. It creates and sends nothing.
func Place(w Where) (Placement, error) {
	pl := Placement{Transport: w.Transport, Agent: w.Agent}
	if pl.Transport == "" {
		pl.Transport = Auto
	}
	switch pl.Transport {
	case Auto, Raw, Sim, UDP, XDP:
	default:
		return pl, inputf("--transport %s: unknown; use auto (the default: the fastest these ports and this kernel run), raw (AF_PACKET on two ports), udp (kernel UDP sockets, any routed path), xdp (AF_XDP on two ports) or sim (simulated DUT, no root)", quote(pl.Transport))
	}
	if w.Agent != nil {
		pl.Transport = UDP
	}
	setting := ""
	if len(w.LabSettings) > 0 {
		setting = w.LabSettings[0]
	}
	portsGiven := !w.PortA.Empty() || !w.PortB.Empty()
	temporary := "a setting of a temporary lab (--lab with no name); drop it"
	switch {
	case pl.Transport == Sim:
		if w.Lab || portsGiven {
			return pl, inputf("--transport sim simulates the DUT and its ports; drop --lab and --port-a/--port-b, or use --transport raw")
		}
		if setting != "" {
			return pl, inputf("%s: a lab setting, but --transport sim has no lab; drop it", setting)
		}
		return pl, nil
	case w.Agent != nil:
		if setting != "" {
			return pl, inputf("%s: a setting of a temporary lab, but --agent runs on a real path; drop it", setting)
		}
		pl.Ports = w.AgentPorts
		return pl, nil
	case w.Lab && portsGiven:
		return pl, inputf("--lab and --port-a/--port-b: choose one; the lab provides both ports")
	case w.Lab && w.LabName == "":
		cfg, err := w.TempLabConfig()
		if err != nil {
			return pl, inputf("temporary lab: %w", err)
		}
		if len(w.LabSettings) == 0 {
			cfg, pl.Reference = ReferenceLab(cfg), true
		}
		pl.TempLab = &cfg
		return pl, nil
	case w.Lab:
		if setting != "" {
			return pl, inputf("%s: a setting of a temporary lab, but --lab %s names an existing one; set it with 'rfc2544 lab up', or use --lab alone", setting, w.LabName)
		}
		if err := lab.ValidateName(w.LabName); err != nil {
			return pl, inputf("--lab %s: %w", w.LabName, err)
		}
		st, err := lab.Load(w.LabName)
		if errors.Is(err, lab.ErrNotFound) {
			return pl, inputf("--lab %s: no such lab is up; create it with 'rfc2544 lab up --name %s', or use --lab alone for a temporary one", w.LabName, w.LabName)
		}
		if err != nil {
			return pl, fmt.Errorf("--lab %s: %w", w.LabName, err)
		}
		pl.LabName, pl.Ports = w.LabName, LabPorts(st)
		return pl, nil
	case !portsGiven:
		return pl, inputf("no ports: run on a lab (--lab for a temporary one, --lab NAME for one from 'rfc2544 lab up'), " +
			"on two interfaces (--port-a IFACE --addr-a 198.18.1.2/24 --gw-a 198.18.1.1 --port-b ... ), or on the simulator (--transport sim)")
	case setting != "":
		return pl, inputf("%s: %s", setting, temporary)
	case (pl.Transport == UDP || pl.Transport == Auto) && w.PortA.Interface == "" && w.PortB.Interface == "":
		// The UDP transport between two addresses: kernel sockets bound
		// to them, no interface to open (and no root unless --netns-X).
		a, err := ParseUDPPort("a", w.PortA, w.IPv6)
		if err != nil {
			return pl, err
		}
		b, err := ParseUDPPort("b", w.PortB, w.IPv6)
		if err != nil {
			return pl, err
		}
		pl.Ports = []Port{a, b}
		return pl, nil
	}
	a, err := ParsePort("a", w.PortA)
	if err != nil {
		return pl, err
	}
	b, err := ParsePort("b", w.PortB)
	if err != nil {
		return pl, err
	}
	switch {
	case a.Interface == b.Interface && a.Netns == b.Netns:
		return pl, inputf("--port-a and --port-b are both %s: the two ports must be different interfaces, one on each side of the DUT", a.Interface)
	case w.IPv6 && (!a.Addr6.IsValid() || !b.Addr6.IsValid()):
		return pl, inputf("--ipv6: give both ports IPv6 addresses with --addr6-a, --gw6-a, --addr6-b and --gw6-b")
	case !w.IPv6 && (!a.Addr.IsValid() || !b.Addr.IsValid()):
		return pl, inputf("--addr-a and --addr-b: IPv4 test frames need both ports' IPv4 addresses (or pass --ipv6)")
	}
	pl.Ports = []Port{a, b}
	return pl, nil
}

// LineRate is the line rate percentages refer to when none was given: the
// nominal 1 Gbit/s where the ports have none of their own (the simulator, a
// lab's veth links, the udp transport between two addresses), else the
// inspected ports' (Inspected.LineRate); and a note on how it was chosen.
func (pl Placement) LineRate(in *Inspected) (bps float64, note string, err error) {
	switch {
	case pl.Transport == Sim:
		return NominalLineRate, "nominal: the simulator has no line rate of its own; set --line-rate", nil
	case pl.Reference:
		return ReferenceLineBps, fmt.Sprintf("nominal: twice the reference DUT's shaped %s, so loads reach above it; set --line-rate", lab.FormatRate(ReferenceRateBps)), nil
	case pl.TempLab != nil || pl.LabName != "":
		return NominalLineRate, "nominal: the lab's veth links have no line rate of their own; set --line-rate", nil
	case len(pl.Ports) > 0 && pl.Ports[0].SocketOnly:
		return NominalLineRate, "nominal: the udp transport between two addresses has no interface to read a line rate from; set --line-rate", nil
	}
	return in.LineRate()
}

// The reference DUT: what a temporary lab is when no lab setting is given
// (`run --lab`, the main job), so that every test has an answer the lab
// knows. A kernel router shaped to 30 Mbit/s each way by tbf (its default
// 10 ms bucket, 37,500 bytes) over a 100-packet queue, on a nominal line of
// 60 Mbit/s: at 64 bytes the line is 89,286 fps, far under what the tester
// sends through the lab's DUT even on a busy 2-CPU box, and the shaper
// (62,500 fps) far under what the DUT's CPU forwards, so the shaper is the
// one limit; the loads of the frame loss test reach twice the throughput;
// and a back-to-back burst at the line overflows bucket + queue within the
// quick profile's 100 ms cap at every size (at 1518 bytes after about 250
// frames, 51 ms). Any lab setting (e.g. --rate 0 for an unshaped DUT)
// builds the lab from the settings instead.
const (
	ReferenceRateBps = 30_000_000
	ReferenceQueue   = 100
	ReferenceLineBps = 2 * ReferenceRateBps
)

// ReferenceLab is c with the reference DUT's shaping both ways.
func ReferenceLab(c lab.Config) lab.Config {
	for _, s := range []*lab.Shaping{&c.AtoB, &c.BtoA} {
		s.RateBps, s.LimitPackets = ReferenceRateBps, ReferenceQueue
	}
	return c
}
