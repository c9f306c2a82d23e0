package main

import (
	"context"
	"io"

	"github.com/rfc2544/rfc2544/internal/atexit"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// openTester opens the tester of a checked setup (rig.Open). Tests replace
// it to count or forbid trials.
var openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
	t, err := rig.Open(ctx, rigConfig(s, logw))
	if err != nil {
		return openedTester{}, err
	}
	dut := t.DUT
	dut.Truth = rig.LabTruth(t.Lab, s.plan)
	return openedTester{tester: t.Tester, dut: dut, transport: t.Transport, why: t.Why, close: t.Close}, nil
}

// rigConfig is the rig a setup asks for.
func rigConfig(s *runSetup, logw io.Writer) rig.Config {
	simCap, simMTU := s.flags.rig.Sim()
	c := rig.Config{Transport: s.transport, Auto: s.auto, Why: s.why, Ports: s.ports, LabName: s.labName, Agent: s.agent, CapBps: s.capBps,
		AllowAnyDestination: s.flags.rig.AllowAny(), Ceilings: s.ceilings, Bidirectional: s.plan.Bidirectional,
		LinkBps: s.plan.LinkBps, SimCapacityBps: simCap, SimMTU: simMTU, Queues: s.flags.rig.Queues(),
		Log: logw, AtExit: atexit.Register, OpenRaw: openEngine, OpenXDP: openXDPEngine}
	if s.tempLab {
		c.TempLab = &s.labCfg
	}
	return c
}

// simDUT is the simulated DUT of --transport sim, changed by the --sim-*
// flags.
func simDUT(s *runSetup) *rfc2544.SimDUT { return rig.SimDUT(rigConfig(s, nil)) }
