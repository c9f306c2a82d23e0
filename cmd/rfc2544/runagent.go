package main

import (
	"flag"

	"github.com/rfc2544/rfc2544/rig"
)

// agentFlags are run's flags for a two-host test with a remote agent as
// port B: --agent HOST[:PORT] --token-file F [--local ADDR] [--reverse].
type agentFlags struct {
	addr, tokenFile, local, clockSync string
	reverse                           bool
}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.addr, "agent", "", "run against the remote agent ('rfc2544 agent') at `HOST[:PORT]` (an IP address; port 2544 if omitted) as port B; implies --transport udp")
	fs.StringVar(&a.tokenFile, "token-file", "", "with --agent: the shared token `FILE` (mode 600, as the agent's)")
	fs.StringVar(&a.local, "local", "", "with --agent: this host's test `address` (port A); default the address the route to the agent leaves from")
	fs.BoolVar(&a.reverse, "reverse", false, "with --agent: send only B->A (the agent sends, this host receives)")
	fs.StringVar(&a.clockSync, "clock-sync", "none", "with --agent: `none` (round-trip latency: the agent reflects tagged frames) or ptp (the hosts' clocks are PTP-synchronized: one-way latency each way; the agent must run with --clock-sync ptp too)")
}

// setupAgent checks the --agent flags before anything is sent: flags that
// mean nothing with an agent here, the rest in rig.ParseAgent.
func setupAgent(f *runFlags, set map[string]bool) (*rig.Agent, []rig.Port, error) {
	a := f.agentF
	if a.addr == "" {
		for _, n := range []string{"token-file", "local", "reverse", "clock-sync"} {
			if set[n] {
				return nil, nil, usagef("--%s: applies to a run with a remote agent; add --agent HOST[:PORT]", n)
			}
		}
		return nil, nil, nil
	}
	if f.transport != "" && f.transport != transportUDP {
		return nil, nil, usagef("--agent with --transport %s: a run with a remote agent uses the udp transport; drop --transport", f.transport)
	}
	if f.lab.set || f.portA.Interface != "" || f.portB.Interface != "" || f.portB.Addr != "" || f.portB.Addr6 != "" || f.portA.Addr != "" {
		return nil, nil, usagef("--agent: the agent is port B and --local this host's address; drop --lab, --port-a/--port-b and --addr-a/--addr-b")
	}
	if set["calibration"] {
		return nil, nil, usagef("--calibration: tester ceilings apply to the raw transport; drop it with --agent")
	}
	return rig.ParseAgent(rig.AgentInput{Addr: a.addr, TokenFile: a.tokenFile, Local: a.local, ClockSync: a.clockSync,
		Reverse: a.reverse, IPv6: f.plan.IPv6(), AllowAny: f.allowAny, Netns: f.portA.Netns})
}
