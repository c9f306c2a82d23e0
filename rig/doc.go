// Package rig is the test rig of a run: the two tester ports (interfaces, a
// lab, or a remote agent), their safety checks, the tester opened on them
// (an rfc2544.Tester for the rfc2544 Runner), and the run's output folder.
//
// It sits between the command and the rest: cmd/rfc2544 → rig → reports,
// rfc2544, lab → trials (and trials/agent); nothing below imports it. A Go
// program that drives its own runs gets here what the command does before,
// during and after the trials:
//
//	a, _ := rig.ParsePort("a", rig.PortInput{Interface: "eth1", Addr: "198.18.1.2/24", Gateway: "198.18.1.1"})
//	b, _ := rig.ParsePort("b", rig.PortInput{Interface: "eth2", Addr: "198.19.1.2/24", Gateway: "198.19.1.1"})
//	ports := []rig.Port{a, b}
//	err := rig.CheckDestinations(ports, false)        // RFC 6815 ranges
//	in, err := rig.CheckPorts(ports, false)           // up, no default route
//	bps, note, err := in.LineRate()                   // what percentages refer to
//	t, err := rig.Open(ctx, rig.Config{Transport: rig.Raw, Ports: ports, CapBps: bps})
//	defer t.Close()
//	f, err := rig.NewFolder(dir, rfc2544.JournalHeader{Plan: plan}) // the journal
//	res, _, err := f.Run(ctx, rig.RunConfig{Plan: plan, Tester: t, DUT: t.DUT, MaxBps: bps})
//	err = rig.WriteResults(dir, res, nil)             // results.json and reports
//
// Flags registers the same settings as command-line flags (in the manner of
// lab.Flags) and checks them into a Placement (Place) and a rate cap;
// BuildPlan makes the plan from a profile, a plan file and the plan's flags.
// RunSweep runs one run per firewall rule count (SweepCounts) and compares
// them; Calibrate measures the tester's ceilings on a loop lab, into the
// file (WriteCalibration) a run reads (ReadCalibration).
//
// Bad input is an *InputError, found before anything is created or sent;
// its message names the setting by the command's flag (e.g. --gw-a), the
// value and the fix.
package rig
