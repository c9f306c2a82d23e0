package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/internal/netdev"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// jumboSizes are what --jumbo adds: the RFC 5180 sizes a 9000-byte MTU path
// carries (9216 needs MTU 9198; ask for it with --sizes).
var jumboSizes = []int{2048, 4096, 8192, 9018}

// setupRun checks every flag and the plan, and resolves the ports, without
// creating or sending anything.
func setupRun(verb string, fixed []rfc2544.Test, f *runFlags, args []string) (*runSetup, error) {
	s := &runSetup{verb: verb, flags: f, args: args}
	if f.resume != "" {
		for name := range f.set() {
			if !slices.Contains(resumeFlags, name) {
				return nil, usagef("--%s with --resume: a resumed run takes every setting from its journal; drop --%s", name, name)
			}
		}
		jc, err := rfc2544.ReadJournal(filepath.Join(f.resume, journalName))
		if errors.Is(err, os.ErrNotExist) {
			return nil, usagef("--resume %s: no %s there; give the --out folder of the run to continue", f.resume, journalName)
		}
		if err != nil {
			return nil, err
		}
		if jc.Header.Verb != verb {
			return nil, usagef("--resume %s: that run was 'rfc2544 %s'; resume it with 'rfc2544 %s --resume %s'", f.resume, jc.Header.Verb, jc.Header.Verb, f.resume)
		}
		// The journaled command line gives the ports; the plan is the
		// journal's, as it was.
		orig, err := parseRunArgs(verb, fixed, jc.Header.Args)
		if err != nil {
			return nil, fmt.Errorf("--resume %s: the journaled command line no longer parses: %w", f.resume, err)
		}
		orig.json, orig.jsonStream, orig.quiet, orig.resume, orig.out = f.json, f.jsonStream, f.quiet, f.resume, f.resume
		s.flags, f = orig, orig
		s.resume = jc
		s.args = jc.Header.Args
	}
	set := f.set()
	if f.json && f.jsonStream {
		return nil, usagef("--json and --json-stream: choose one (--json writes the results at the end, --json-stream the run as it goes and the results in its end event)")
	}

	// Transport and ports.
	s.transport = f.transport
	if s.transport == "" {
		s.transport = transportRaw
	}
	switch s.transport {
	case transportRaw, transportSim, transportUDP, transportXDP:
	default:
		return nil, usagef("--transport %s: unknown; use raw (AF_PACKET on two ports), udp (kernel UDP sockets, any routed path), xdp (AF_XDP on two ports) or sim (simulated DUT, no root)", quoteShort(s.transport))
	}
	agentT, agentPorts, err := setupAgent(f, set)
	if err != nil {
		return nil, err
	}
	if agentT != nil {
		s.agent, s.transport = agentT, transportUDP
	}
	var labSet []string
	for _, n := range labSettingFlags {
		if set[n] {
			labSet = append(labSet, "--"+n)
		}
	}
	portsGiven := !f.portA.empty() || !f.portB.empty()
	switch {
	case s.transport == transportSim:
		if f.lab.set || portsGiven {
			return nil, usagef("--transport sim simulates the DUT and its ports; drop --lab and --port-a/--port-b, or use --transport raw")
		}
		if len(labSet) > 0 {
			return nil, usagef("%s: a lab setting, but --transport sim has no lab; drop it", labSet[0])
		}
	case s.agent != nil:
		if len(labSet) > 0 {
			return nil, usagef("%s: a setting of a temporary lab, but --agent runs on a real path; drop it", labSet[0])
		}
		s.ports = agentPorts
	case f.lab.set && portsGiven:
		return nil, usagef("--lab and --port-a/--port-b: choose one; the lab provides both ports")
	case f.lab.temporary():
		cfg, err := f.labFlags.Config(tempLabName())
		if err != nil {
			return nil, usagef("temporary lab: %w", err)
		}
		s.tempLab, s.labCfg = true, cfg
	case f.lab.set:
		if len(labSet) > 0 {
			return nil, usagef("%s: a setting of a temporary lab, but --lab %s names an existing one; set it with 'rfc2544 lab up', or use --lab alone", labSet[0], f.lab.name)
		}
		if err := lab.ValidateName(f.lab.name); err != nil {
			return nil, usagef("--lab %s: %w", f.lab.name, err)
		}
		st, err := lab.Load(f.lab.name)
		if err != nil {
			if errors.Is(err, lab.ErrNotFound) {
				return nil, usagef("--lab %s: no such lab is up; create it with 'rfc2544 lab up --name %s', or use --lab alone for a temporary one", f.lab.name, f.lab.name)
			}
			return nil, fmt.Errorf("--lab %s: %w", f.lab.name, err)
		}
		s.labName = f.lab.name
		s.ports = labPorts(st)
	case s.transport == transportUDP && portsGiven && f.portA.iface == "" && f.portB.iface == "":
		// The UDP transport between two addresses: kernel sockets bound
		// to them, no interface to open (and no root unless --netns-X).
		if len(labSet) > 0 {
			return nil, usagef("%s: a setting of a temporary lab (--lab with no name); drop it", labSet[0])
		}
		a, err := parseUDPPort("a", f.portA, f.ipv6)
		if err != nil {
			return nil, err
		}
		b, err := parseUDPPort("b", f.portB, f.ipv6)
		if err != nil {
			return nil, err
		}
		s.ports = []portConfig{a, b}
	case portsGiven:
		if len(labSet) > 0 {
			return nil, usagef("%s: a setting of a temporary lab (--lab with no name); drop it", labSet[0])
		}
		a, err := parsePort("a", f.portA)
		if err != nil {
			return nil, err
		}
		b, err := parsePort("b", f.portB)
		if err != nil {
			return nil, err
		}
		if a.iface == b.iface && a.netns == b.netns {
			return nil, usagef("--port-a and --port-b are both %s: the two ports must be different interfaces, one on each side of the DUT", a.iface)
		}
		if f.ipv6 && (!a.addr6.IsValid() || !b.addr6.IsValid()) {
			return nil, usagef("--ipv6: give both ports IPv6 addresses with --addr6-a, --gw6-a, --addr6-b and --gw6-b")
		}
		if !f.ipv6 && (!a.addr.IsValid() || !b.addr.IsValid()) {
			return nil, usagef("--addr-a and --addr-b: IPv4 test frames need both ports' IPv4 addresses (or pass --ipv6)")
		}
		s.ports = []portConfig{a, b}
	default:
		return nil, usagef("no ports: run on a lab (--lab for a temporary one, --lab NAME for one from 'rfc2544 lab up'), " +
			"on two interfaces (--port-a IFACE --addr-a 198.18.1.2/24 --gw-a 198.18.1.1 --port-b ... ), or on the simulator (--transport sim)")
	}

	if set["sim-mtu"] && (f.simMTU < 68 || f.simMTU > 65535) {
		return nil, usagef("--sim-mtu %d: the simulated path's IP MTU is 68 to 65535 bytes; leave it out for 1500", f.simMTU)
	}
	if f.calibration != "" {
		if s.transport != transportRaw {
			return nil, usagef("--calibration: tester ceilings apply to the raw transport; drop it with --transport %s", s.transport)
		}
		pts, err := readCalibration(f.calibration)
		if err != nil {
			return nil, err
		}
		s.ceilings = pts
	}

	// Safety (RFC 6815), part one: addresses. The route check needs the
	// interfaces and comes with the line rate below.
	if err := checkDestinations(s.ports, f.allowAny); err != nil {
		return nil, err
	}

	// The plan: profile, then plan file, then flags.
	if s.resume != nil {
		s.plan = s.resume.Header.Plan
	} else {
		p, err := buildPlan(s, fixed, set)
		if err != nil {
			return nil, err
		}
		s.plan = p
	}

	// The line rate percentages refer to, and the ports' own checks.
	var infos []netdev.Info
	for _, p := range s.ports {
		if p.fromLab || p.socketOnly {
			continue
		}
		info, err := inspectPort(p)
		if err != nil {
			return nil, err
		}
		if info.CarriesDefault && !f.force {
			return nil, usagef("--port-%s %s: carries the default route of %s, so test traffic could leave this host's network; use a dedicated test port, or pass --force if this is intended",
				p.name, p.iface, nsName(p.netns))
		}
		if !info.Up {
			return nil, usagef("--port-%s %s: the interface is down; bring it up with 'ip link set %s up'", p.name, p.iface, p.iface)
		}
		infos = append(infos, info)
	}
	if s.resume == nil {
		switch {
		case set["line-rate"]:
			s.lineNote = "from --line-rate"
		case s.linkGiven || s.plan.LinkBps != 0:
			s.lineNote = "from the plan file"
		case s.transport == transportSim:
			s.plan.LinkBps, s.lineNote = nominalLineRate, "nominal: the simulator has no line rate of its own; set --line-rate"
		case s.tempLab || s.labName != "":
			s.plan.LinkBps, s.lineNote = nominalLineRate, "nominal: the lab's veth links have no line rate of their own; set --line-rate"
		case len(s.ports) > 0 && s.ports[0].socketOnly:
			s.plan.LinkBps, s.lineNote = nominalLineRate, "nominal: the udp transport between two addresses has no interface to read a line rate from; set --line-rate"
		default:
			bps, note, err := portLineRate(s.ports, infos)
			if err != nil {
				return nil, err
			}
			s.plan.LinkBps, s.lineNote = bps, note
		}
		// Not WithDefaults: the plan is complete (profile, file, flags),
		// and a zero in it was given as zero, for Validate to refuse.
		if err := s.plan.Validate(); err != nil {
			return nil, planError(err, f, set)
		}
	} else {
		s.lineNote = "from the journal"
	}

	// Safety, part two: the rate cap.
	s.capBps, s.capNote = s.plan.LinkBps, "the line rate; --max-rate changes it"
	if f.maxRate != "" {
		bps, err := parseBitRate("--max-rate", f.maxRate)
		if err != nil {
			return nil, usageError{err}
		}
		s.capBps, s.capNote = bps, "--max-rate"
	}
	if need, by := s.plan.HighestLoad(); need > s.capBps*(1+1e-9) {
		why := fmt.Sprintf("the %s test sends at the full line rate %s", by, formatBitRate(s.plan.LinkBps))
		if by == rfc2544.TestThroughput {
			why = fmt.Sprintf("the throughput search goes up to %g%% of the line rate %s", s.plan.Throughput.MaxPercent, formatBitRate(s.plan.LinkBps))
		}
		return nil, usagef("--max-rate %s: below the %s the plan sends (%s); raise --max-rate, or lower --line-rate or the plan's loads",
			formatBitRate(s.capBps), formatBitRate(need), why)
	}

	// The output folder.
	s.out = f.out
	if s.out == "" {
		s.out = "rfc2544-results-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if s.resume == nil && !f.dryRun {
		if err := checkOutFree(s.out, f.overwrite); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func nsName(ns string) string {
	if ns == "" {
		return "this host"
	}
	return "network namespace " + ns
}

// tempLabName names a temporary lab after the process, so two runs never
// collide and a leftover is easy to trace.
func tempLabName() string { return fmt.Sprintf("tmp-%d", os.Getpid()) }

// labPorts converts a lab's state into the run's ports.
func labPorts(st *lab.State) []portConfig {
	conv := func(name string, p lab.Port) portConfig {
		return portConfig{name: name, iface: p.Interface, netns: p.Namespace, addr: p.IPv4, gateway: p.GatewayV4,
			addr6: p.IPv6, gateway6: p.GatewayV6, fromLab: true}
	}
	return []portConfig{conv("a", st.A), conv("b", st.B)}
}

// portLineRate is the line rate of two explicit ports: their speed (the
// slower one), or the nominal 1 Gbit/s for veth (netdev.Info.LineRateBps).
func portLineRate(ports []portConfig, infos []netdev.Info) (float64, string, error) {
	var bps float64
	var notes []string
	for i, info := range infos {
		p := ports[i]
		v, nominal := info.LineRateBps()
		switch {
		case nominal:
			notes = append(notes, fmt.Sprintf("%s is a veth: nominal %s", p.iface, formatBitRate(v)))
		case v > 0:
			notes = append(notes, fmt.Sprintf("%s reports %s", p.iface, formatBitRate(v)))
		default:
			return 0, "", usagef("--port-%s %s: its driver (%s) reports no link speed, so percentages would have no meaning; give the line rate with --line-rate, e.g. --line-rate 10G",
				p.name, p.iface, orUnknown(info.Driver))
		}
		if bps == 0 || v < bps {
			bps = v
		}
	}
	return bps, strings.Join(notes, ", "), nil
}

// planFileError is a usage error naming --plan.
func planFileError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return usagef("--plan %s: no such file; see testdata/plans/ for examples", path)
	}
	return usagef("--plan %w", err)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// buildPlan makes the effective plan of a new run: the profile's plan, the
// plan file over it, the flags over both.
func buildPlan(s *runSetup, fixed []rfc2544.Test, set map[string]bool) (rfc2544.Plan, error) {
	f := s.flags
	profile := f.profile
	if profile == "" && f.planFile != "" {
		pp, err := rfc2544.LoadPlanProfile(f.planFile)
		if err != nil {
			return rfc2544.Plan{}, planFileError(f.planFile, err)
		}
		profile = pp
	}
	if profile == "" {
		profile = "rfc2544"
		if s.tempLab {
			profile = "quick"
		}
	}
	p, err := rfc2544.DefaultPlan(profile)
	p = p.WithDefaults() // complete: a zero later on was given as zero
	if err != nil {
		if f.profile == "" && f.planFile != "" {
			return p, usagef("--plan %s: %w", f.planFile, err)
		}
		return p, usagef("--profile %s: unknown; use rfc2544 (the standard's durations) or quick (short trials)", quoteShort(profile))
	}
	if f.planFile != "" {
		var given map[string]bool
		if p, given, err = rfc2544.LoadPlan(f.planFile, p); err != nil {
			return p, planFileError(f.planFile, err)
		}
		s.linkGiven = given["link_bps"]
		p.Profile = profile
	}
	if fixed != nil {
		p.Tests = fixed
	} else if set["tests"] {
		if p.Tests, err = parseTests(f.tests); err != nil {
			return p, usageError{err}
		}
	}
	if set["ipv6"] {
		p.IPv6 = f.ipv6
	}
	if set["sizes"] {
		if p.FrameSizes, err = parseSizes(f.sizes); err != nil {
			return p, usageError{err}
		}
	}
	if f.jumbo {
		for _, j := range jumboSizes {
			if !slices.Contains(p.FrameSizes, j) {
				p.FrameSizes = append(p.FrameSizes, j)
			}
		}
	}
	if set["line-rate"] {
		if p.LinkBps, err = parseBitRate("--line-rate", f.lineRate); err != nil {
			return p, usageError{err}
		}
	}
	// The flags only set fields; Plan.Validate checks them with the plan
	// file's fields, and planError names the flag of a bad one.
	for _, d := range []struct {
		name string
		v    rfc2544.Duration
		dst  *rfc2544.Duration
	}{
		{"duration", f.duration, &p.Trial.Duration},
		{"settle", f.settle, &p.Trial.Settle},
		{"learning", f.learning, &p.Trial.Learning},
		{"rest", f.rest, &p.Trial.Rest},
		{"latency-duration", f.latencyDuration, &p.Latency.Duration},
		{"b2b-cap", f.b2bCap, &p.BackToBack.BurstCap},
	} {
		if set[d.name] {
			*d.dst = d.v
		}
	}
	if set["search"] {
		p.Throughput.Search = rfc2544.Search(strings.ToLower(f.search))
	}
	if set["resolution"] {
		if f.resolution.rel {
			p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent = 0, f.resolution.v
		} else {
			p.Throughput.ResolutionPercent, p.Throughput.ResolutionRelativePercent = f.resolution.v, 0
		}
	}
	if err := setMLRFlags(f, set, &p); err != nil {
		return p, err
	}
	for _, v := range []struct {
		name string
		v    float64
		dst  *float64
	}{
		{"loss-tolerance", f.lossTolerance.v, &p.Throughput.LossTolerancePercent},
		{"loss-step", f.lossStep.v, &p.FrameLoss.StepPercent},
	} {
		if set[v.name] {
			*v.dst = v.v
		}
	}
	for _, n := range []struct {
		name string
		v    int
		dst  *int
	}{
		{"latency-reps", f.latencyReps, &p.Latency.Repetitions},
		{"b2b-reps", f.b2bReps, &p.BackToBack.Repetitions},
		{"max-trials", f.maxTrials, &p.Throughput.MaxTrials},
		{"flows", f.flows, &p.Flows},
		{"retries", f.retries, &p.Trial.Retries},
	} {
		if set[n.name] {
			*n.dst = n.v
		}
	}
	if p.Trial.Retries == 0 {
		// Given as 0 (the profile's is 2), in the plan file or by
		// --retries: never, which the plan writes -1 (its 0 would be the
		// profile's value).
		p.Trial.Retries = -1
	}
	if set["bidir"] {
		p.Bidirectional = f.bidir
	}
	if set["no-probe"] {
		p.NoProbe = f.noProbe
	}
	return p, nil
}

// planFlags names the flag that sets each plan field.
var planFlags = map[string]string{
	"tests": "tests", "frame_sizes": "sizes", "link_bps": "line-rate", "flows": "flows",
	"trial.duration": "duration", "trial.settle": "settle", "trial.learning": "learning", "trial.rest": "rest",
	"trial.retries": "retries", "throughput.search": "search", "throughput.resolution_percent": "resolution",
	"throughput.resolution_relative_percent": "resolution",
	"throughput.loss_tolerance_percent":      "loss-tolerance", "throughput.max_trials": "max-trials",
	"latency.duration": "latency-duration", "latency.repetitions": "latency-reps", "frame_loss.step_percent": "loss-step",
	"back_to_back.burst_cap": "b2b-cap", "back_to_back.repetitions": "b2b-reps",
}

// planError says where a bad plan field came from: its flag when the
// command line set it, else the plan file. The message after that is the
// same either way: rfc2544.Plan.Validate's.
func planError(err error, f *runFlags, set map[string]bool) error {
	var pe *rfc2544.PlanError
	if errors.As(err, &pe) {
		if name, ok := planFlags[pe.Field]; ok && set[name] {
			return usagef("--%s %s: %w", name, flagValue(f.fs.Lookup(name).Value.String()), err)
		}
		if pe.Field == "frame_sizes" && f.jumbo {
			return usagef("--jumbo: %w", err)
		}
	}
	if f.planFile != "" {
		return usagef("--plan %s: %w", f.planFile, err)
	}
	return usageError{err}
}

// sizesString lists frame sizes for the output.
func sizesString(sizes []int) string {
	var b strings.Builder
	for i, s := range sizes {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(framing.SizeName(s)) // a mix by name, as --sizes reads it
	}
	return b.String()
}

// readCalibration reads the output of 'rfc2544 calibrate --json'.
func readCalibration(path string) ([]trials.CalibrationPoint, error) {
	b, err := fileio.ReadBounded(path, maxCalibrationBytes)
	if err != nil {
		return nil, usagef("--calibration %s: %v; write one with 'rfc2544 calibrate --lab NAME --json > %s'", path, err, path)
	}
	pts, err := rfc2544.ParseCalibration(b)
	if err != nil {
		return nil, usagef("--calibration %s: %w", path, err)
	}
	return pts, nil
}

// setMLRFlags applies --goals, --allow-buffering, --max-latency and
// --latency-percentile.
func setMLRFlags(f *runFlags, set map[string]bool, p *rfc2544.Plan) error {
	t := &p.Throughput
	if set["goals"] {
		g, err := rfc2544.ParseGoals(f.goals, t.Goals)
		if err != nil {
			return usagef("--goals %q: %v", f.goals, err)
		}
		t.Goals = g
	}
	if set["allow-buffering"] {
		t.AllowBuffering = f.allowBuffering
	}
	if set["max-latency"] {
		if f.maxLatency.d <= 0 {
			return usagef("--max-latency %v: give a positive bound such as 30us, or leave it out", f.maxLatency.d)
		}
		t.MaxLatency = rfc2544.Duration(f.maxLatency.d)
	}
	if set["latency-percentile"] {
		switch f.latencyPercentile {
		case 50, 90, 99, 99.9, 100:
			t.LatencyPercentile = f.latencyPercentile
		default:
			return usagef("--latency-percentile %g: use 50, 90, 99, 99.9 or 100 (the maximum)", f.latencyPercentile)
		}
		if !set["max-latency"] && t.MaxLatency == 0 {
			return usagef("--latency-percentile %g: it qualifies --max-latency; add e.g. --max-latency 30us", f.latencyPercentile)
		}
	}
	return nil
}
