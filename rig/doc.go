// Package rig is the test rig of a run: the two tester ports (interfaces,
// a lab, or a remote agent), their safety checks, and the tester opened on
// them, an rfc2544.Tester for the rfc2544 Runner.
//
// It sits between the command and the rest: cmd/rfc2544 → rig → rfc2544,
// lab, trials (and trials/agent). A Go program that drives its own runs
// gets here what the command does before the first trial:
//
//	a, _ := rig.ParsePort("a", rig.PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.18.1.1"})
//	b, _ := rig.ParsePort("b", rig.PortInput{Interface: "eth2", Addr: "198.19.1.2/24", Gateway: "198.19.1.1"})
//	ports := []rig.Port{a, b}
//	err := rig.CheckDestinations(ports, false)       // RFC 6815 ranges
//	in, err := rig.CheckPorts(ports, false)          // up, no default route
//	bps, note, err := in.LineRate()                  // what percentages refer to
//	t, err := rig.Open(ctx, rig.Config{Transport: rig.Raw, Ports: ports, CapBps: bps})
//	defer t.Close()
//
// Bad input is an *InputError, found before anything is created or sent; its
// message names the setting by the command's flag (e.g. --gw-a), the value
// and the fix, the way lab.Flags does for a lab's settings.
package rig
