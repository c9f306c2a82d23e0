package rig

import (
	"flag"
	"fmt"
	"runtime"
	"strings"

	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/lab"
)

// Flags are the rig's settings as command-line flags, the way the run verbs
// take them (in the manner of lab.Flags): AddFlags registers them, FixLabArg
// readies the arguments (--lab takes an optional name), Place checks where
// the ports are, Cap the rate cap. Errors name the flag.
type Flags struct {
	fs           *flag.FlagSet
	transport    string
	lab          labFlag
	portA, portB PortInput
	agent        AgentInput
	simCapacity  float64
	simMTU       int
	allowAny     bool
	force        bool
	maxRate      string
	queues       int
}

// AddFlags registers the rig's flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.transport, "transport", "", "how traffic is made (`name`): auto (the default: xdp where the kernel runs it and the frames fit, else raw; udp between two addresses or without root), raw (AF_PACKET), udp (kernel UDP sockets: any routed path, no root without namespaces; --addr-a/--addr-b alone), xdp (AF_XDP on two ports: root, Linux with XDP) or sim (simulated DUT, no root)")
	fs.IntVar(&f.queues, "queues", 1, "xdp: queues per port (`N`): one AF_XDP socket and one sending thread each, the rate split between them; at most the CPUs and the ports' queues (a temporary lab's veths get N)")
	fs.StringVar(&f.maxRate, "max-rate", "", "`rate` cap per port, always in force, e.g. 1G (default: the line rate)")
	fs.Var(&f.lab, "lab", "run on the lab `NAME` (from 'rfc2544 lab up'); with no name, create a temporary lab and remove it afterwards")
	fs.StringVar(&f.portA.Interface, "port-a", "", "tester `interface` of port A (DUT input side)")
	fs.StringVar(&f.portB.Interface, "port-b", "", "tester `interface` of port B (DUT output side)")
	fs.StringVar(&f.portA.Netns, "netns-a", "", "network `namespace` holding --port-a")
	fs.StringVar(&f.portB.Netns, "netns-b", "", "network `namespace` holding --port-b")
	fs.StringVar(&f.portA.Addr, "addr-a", "", "port A's IPv4 `address/len`, e.g. 198.18.1.2/24")
	fs.StringVar(&f.portB.Addr, "addr-b", "", "port B's IPv4 `address/len`, e.g. 198.19.1.2/24")
	fs.StringVar(&f.portA.Gateway, "gw-a", "", "the DUT's IPv4 `address` on port A's side, e.g. 198.18.1.1")
	fs.StringVar(&f.portB.Gateway, "gw-b", "", "the DUT's IPv4 `address` on port B's side, e.g. 198.19.1.1")
	fs.StringVar(&f.portA.Addr6, "addr6-a", "", "port A's IPv6 `address/len`, e.g. 2001:2:0:1::2/64")
	fs.StringVar(&f.portB.Addr6, "addr6-b", "", "port B's IPv6 `address/len`")
	fs.StringVar(&f.portA.Gateway6, "gw6-a", "", "the DUT's IPv6 `address` on port A's side")
	fs.StringVar(&f.portB.Gateway6, "gw6-b", "", "the DUT's IPv6 `address` on port B's side")
	fs.BoolVar(&f.allowAny, "allow-any-destination", false, "allow test addresses outside 198.18.0.0/15 and 2001:2::/48 (RFC 6815: isolated networks only)")
	fs.BoolVar(&f.force, "force", false, "allow a port that carries the host's default route")
	fs.Func("sim-capacity", "sim: the simulated DUT's forwarding `rate` per direction, e.g. 500M (default 80% of the line rate)", func(v string) error {
		bps, err := rate.ParseBits(v)
		if err != nil {
			return fmt.Errorf("--sim-capacity %s: %w", quote(v), err)
		}
		f.simCapacity = bps
		return nil
	})
	fs.IntVar(&f.simMTU, "sim-mtu", 0, "sim: the simulated path's IP MTU in `bytes`, 68 to 65535 (default 1500)")
	a := &f.agent
	fs.StringVar(&a.Addr, "agent", "", "run against the remote agent ('rfc2544 agent') at `HOST[:PORT]` (an IP address; port 2544 if omitted) as port B; implies --transport udp")
	fs.StringVar(&a.TokenFile, "token-file", "", "with --agent: the shared token `FILE` (mode 600, as the agent's)")
	fs.StringVar(&a.Local, "local", "", "with --agent: this host's test `address` (port A); default the address the route to the agent leaves from")
	fs.BoolVar(&a.Reverse, "reverse", false, "with --agent: send only B->A (the agent sends, this host receives)")
	fs.StringVar(&a.ClockSync, "clock-sync", "none", "with --agent: `none` (round-trip latency: the agent reflects tagged frames) or ptp (the hosts' clocks are PTP-synchronized: one-way latency each way; the agent must run with --clock-sync ptp too)")
	return f
}

func (f *Flags) set() map[string]bool {
	m := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { m[fl.Name] = true })
	return m
}

// Queues reports --queues.
func (f *Flags) Queues() int { return f.queues }

// CheckQueues checks --queues n for the transport on a host with cpus CPUs:
// 1 anywhere, more only on xdp (or auto, which Choose then holds to xdp)
// and at most one per CPU.
func CheckQueues(n int, transport string, cpus int) error {
	switch {
	case n < 1:
		return inputf("--queues %d: want 1 or more queues per port", n)
	case n > 1 && transport != XDP && transport != Auto:
		return inputf("--queues %d: only the xdp transport sends on several queues; add --transport xdp, or drop --queues", n)
	case n > cpus:
		return inputf("--queues %d: this host has %d CPUs, and each queue's sending thread needs its own; use at most --queues %d", n, cpus, cpus)
	}
	return nil
}

// AllowAny reports --allow-any-destination; Force --force.
func (f *Flags) AllowAny() bool { return f.allowAny }
func (f *Flags) Force() bool    { return f.force }

// Sim is a Config's simulator settings: --sim-capacity and --sim-mtu.
func (f *Flags) Sim() (capacityBps float64, mtu int) { return f.simCapacity, f.simMTU }

// Lab reports --lab: given, and its name ("" for a temporary lab).
func (f *Flags) Lab() (given bool, name string) {
	if f.lab.temporary() {
		return true, ""
	}
	return f.lab.set, f.lab.name
}

// Place checks where the ports are (Place), with the agent's flags
// (ParseAgent) and the simulator's. ipv6 is the plan's frames; labSettings
// the temporary lab's flags that were given; tempLab its settings.
func (f *Flags) Place(ipv6 bool, labSettings []string, tempLab func() (lab.Config, error)) (Placement, error) {
	set := f.set()
	w := Where{Transport: f.transport, LabSettings: labSettings, TempLabConfig: tempLab, PortA: f.portA, PortB: f.portB, IPv6: ipv6}
	w.Lab, w.LabName = f.Lab()
	if err := f.agentPlace(set, ipv6, &w); err != nil {
		return Placement{}, err
	}
	pl, err := Place(w)
	if err == nil {
		err = CheckQueues(f.queues, pl.Transport, runtime.NumCPU())
	}
	if err == nil && pl.TempLab != nil && f.queues > 1 {
		pl.TempLab.Queues = max(pl.TempLab.Queues, f.queues)
	}
	if err == nil && set["sim-mtu"] && (f.simMTU < 68 || f.simMTU > 65535) {
		err = inputf("--sim-mtu %d: the simulated path's IP MTU is 68 to 65535 bytes; leave it out for 1500", f.simMTU)
	}
	return pl, err
}

// agentPlace checks the agent's flags into w.
func (f *Flags) agentPlace(set map[string]bool, ipv6 bool, w *Where) error {
	a := f.agent
	if a.Addr == "" {
		for _, n := range []string{"token-file", "local", "reverse", "clock-sync"} {
			if set[n] {
				return inputf("--%s: applies to a run with a remote agent; add --agent HOST[:PORT]", n)
			}
		}
		return nil
	}
	if f.transport != "" && f.transport != UDP {
		return inputf("--agent with --transport %s: a run with a remote agent uses the udp transport; drop --transport", f.transport)
	}
	if f.lab.set || f.portA.Interface != "" || f.portB.Interface != "" || f.portB.Addr != "" || f.portB.Addr6 != "" || f.portA.Addr != "" {
		return inputf("--agent: the agent is port B and --local this host's address; drop --lab, --port-a/--port-b and --addr-a/--addr-b")
	}
	if set["calibration"] {
		return inputf("--calibration: tester ceilings apply to the raw and xdp transports; drop it with --agent")
	}
	a.IPv6, a.AllowAny, a.Netns = ipv6, f.allowAny, f.portA.Netns
	var err error
	w.Agent, w.AgentPorts, err = ParseAgent(a)
	return err
}

// Cap is the rate cap per port: --max-rate, or the line rate lineBps; and
// where it came from.
func (f *Flags) Cap(lineBps float64) (bps float64, source string, err error) {
	if f.maxRate == "" {
		return lineBps, "the line rate; --max-rate changes it", nil
	}
	if bps, err = rate.ParseBits(f.maxRate); err != nil {
		return 0, "", inputf("--max-rate %s: %w", quote(f.maxRate), err)
	}
	return bps, "--max-rate", nil
}

// labTemporary is what an --lab without a name becomes after FixLabArg:
// the run creates a temporary lab and removes it afterwards.
const labTemporary = "\x00temporary"

// labFlag is --lab [NAME]. Go's flag package has no optional values, so
// FixLabArg rewrites a bare --lab before parsing.
type labFlag struct {
	set  bool
	name string // labTemporary for a temporary lab
}

func (l *labFlag) String() string {
	if l == nil || !l.set {
		return ""
	}
	if l.name == labTemporary {
		return "(temporary)"
	}
	return l.name
}

func (l *labFlag) Set(s string) error {
	l.set = true
	if s == "" {
		s = labTemporary
	}
	l.name = s
	return nil
}

func (l *labFlag) temporary() bool { return l.set && l.name == labTemporary }

// LabFlag is --lab [NAME] for a verb that takes no other rig.Flags (tcp):
// register it with fs.Var and parse the arguments through FixLabArg.
type LabFlag = labFlag

// IsSet reports whether --lab was given.
func (l *labFlag) IsSet() bool { return l.set }

// Temporary reports whether --lab was given without a name: the verb
// creates a temporary lab and removes it afterwards.
func (l *labFlag) Temporary() bool { return l.temporary() }

// Name is the lab named by --lab NAME ("" for a temporary lab).
func (l *labFlag) Name() string {
	if l.temporary() {
		return ""
	}
	return l.name
}

// FixLabArg rewrites a bare "--lab" (or "-lab") that is followed by another
// flag or by nothing into "--lab=", which --lab reads as "temporary lab".
// "--lab NAME" and "--lab=NAME" are left alone. Arguments after "--" are
// not flags and are not touched.
func FixLabArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--lab" || a == "-lab") && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-")) {
			out = append(out, "--lab=")
			continue
		}
		out = append(out, a)
	}
	return out
}
