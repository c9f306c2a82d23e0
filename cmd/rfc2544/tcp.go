package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/reports"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
)

const tcpUsage = `Usage: rfc2544 tcp [flags]

The RFC 6349 TCP throughput test, kernel TCP from port A to port B: the
idle path's MTU and RTT, the BDP from the bottleneck bandwidth, then a
transfer with windows and connections sized from the BDP (or given), and
the RFC 6349 metrics: throughput against the maximum achievable for the
MSS, TCP transfer time ratio, TCP efficiency and buffer delay.

  sudo rfc2544 tcp --lab --dut relay --rate 100mbit --delay 10ms
  sudo rfc2544 tcp --lab demo --window 64k --streams 2
  rfc2544 tcp --src 198.18.0.1 --dst 198.18.0.2 --bb 1G
  sudo rfc2544 tcp --lab --rate 60mbit --bb search
  sudo rfc2544 tcp --lab --rate-ab 100mbit --rate-ba 30mbit --both
  rfc2544 tcp --agent 198.19.1.2 --token-file agent.token [--bb 1G] [--reverse]
  sudo rfc2544 tcp --lab --dut relay --rate 100mbit --delay 10ms --out tcp-report

Flags:
`

// runTCPVerb is 'rfc2544 tcp'.
func runTCPVerb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tcp", flag.ContinueOnError)
	helpOn(fs, stdout, tcpUsage)
	var lf rig.LabFlag
	fs.Var(&lf, "lab", "run on the built-in lab: `NAME` of a lab that is up, or none for a temporary one built from the lab flags")
	labf := lab.AddFlags(fs)
	src := fs.String("src", "", "sender `address` on this host (without --lab)")
	dst := fs.String("dst", "", "receiver `address` on this host (without --lab)")
	bb := fs.String("bb", "", "bottleneck bandwidth in bits per second, e.g. 100mbit, or search: the UDP throughput search between the two ends at 1518 B (default on a shaped lab: its rate A to B; through an agent: search)")
	lineRate := fs.String("line-rate", "", "with the bottleneck search: its line rate (100 %), e.g. 10G (default: a nominal 1 Gbit/s on a lab or between two addresses; through an agent, its --max-rate)")
	window := fs.String("window", "", "TCP window per connection in `bytes`, e.g. 256k (default: from the BDP)")
	streams := fs.Int("streams", 0, "number of TCP connections (default: from the BDP)")
	dur := fs.Duration("duration", rfc2544.DefaultTCPDuration, "length of the transfer")
	reverse := fs.Bool("reverse", false, "send from port B to port A (from --dst to --src; with --agent, from the agent)")
	both := fs.Bool("both", false, "both directions at once, A to B and B to A (to and from an agent), each against its own bottleneck")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	outDir := fs.String("out", "", "also write the result into `DIR`: tcp.json, report.txt, samples.csv and report.html (throughput and RTT over the transfer)")
	var ag agent.TCPOpen
	fs.StringVar(&ag.Addr, "agent", "", "run against the remote agent ('rfc2544 agent') at `HOST[:PORT]`; without --bb the bottleneck is found by the UDP throughput search through it")
	tokenFile := fs.String("token-file", "", "with --agent: the shared token `FILE` (mode 600, as the agent's)")
	fs.StringVar(&ag.Namespace, "netns", "", "with --agent: this side's network `namespace`")
	planFile := fs.String("plan", "", "YAML plan `file` whose tcp section sets the flags above (bottleneck, line_rate, window, streams, duration, direction: a-to-b, b-to-a or both); flags override it")
	dryRun := fs.Bool("dry-run", false, "print the effective test (a plan file with its tcp section) and what it would do, and create or send nothing")
	if err := fs.Parse(rig.FixLabArg(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("tcp: %s", flagError(err))
	}
	if fs.NArg() > 0 {
		return usagef("tcp: unexpected argument %q", fs.Arg(0))
	}
	if *planFile != "" {
		if err := applyTCPPlan(fs, *planFile); err != nil {
			return err
		}
	}
	// dry describes the test for --dry-run once its ends are known.
	dry := func(ends string, shaped func(rev bool) float64) error {
		return tcpDryRun(stdout, *jsonOut, tcpDry{ends: ends, bb: *bb, lineRate: *lineRate, window: *window, streams: *streams,
			dur: *dur, reverse: *reverse, both: *both, shaped: shaped})
	}
	if *outDir != "" {
		// Before any traffic: a folder that cannot be made is the flag's.
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return usagef("tcp --out %s: %v; give a folder this user can write", quoteShort(*outDir), err)
		}
	}
	if *both && *reverse {
		return usagef("tcp --both and --reverse: --both runs both directions; give one or the other")
	}
	write := func(res rfc2544.TCPResult) error {
		if *outDir != "" {
			var files []outputFile
			for _, o := range reports.TCPOutputs(res) {
				files = append(files, outputFile{Name: o.Name, Write: o.Write})
			}
			if err := writeFilesAtomic(*outDir, files); err != nil {
				return fmt.Errorf("tcp --out %s: %w", quoteShort(*outDir), err)
			}
			fmt.Fprintf(stderr, "tcp: wrote %s (tcp.json, report.txt, samples.csv, report.html)\n", *outDir)
		}
		if *jsonOut {
			return reports.WriteTCPJSON(stdout, res)
		}
		return reports.WriteTCPText(stdout, res)
	}
	// writeBoth writes a test in both directions: --out DIR gets a folder
	// per direction (a-to-b, b-to-a) with write's files, --json an array
	// of the two results, the text the two reports one after the other.
	writeBoth := func(res [2]rfc2544.TCPResult) error {
		if *outDir != "" {
			for i, sub := range []string{"a-to-b", "b-to-a"} {
				var files []outputFile
				for _, o := range reports.TCPOutputs(res[i]) {
					files = append(files, outputFile{Name: o.Name, Write: o.Write})
				}
				d := filepath.Join(*outDir, sub)
				if err := os.MkdirAll(d, 0o755); err != nil {
					return fmt.Errorf("tcp --out %s: %w", quoteShort(*outDir), err)
				}
				if err := writeFilesAtomic(d, files); err != nil {
					return fmt.Errorf("tcp --out %s: %w", quoteShort(*outDir), err)
				}
			}
			fmt.Fprintf(stderr, "tcp: wrote %s (a-to-b/ and b-to-a/: tcp.json, report.txt, samples.csv, report.html)\n", *outDir)
		}
		if *jsonOut {
			return reports.WriteTCPJSONBoth(stdout, res)
		}
		for i, r := range res {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			if err := reports.WriteTCPText(stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	plan := rfc2544.TCPPlan{Streams: *streams, Duration: rfc2544.Duration(*dur)}
	if *dur <= 0 {
		return usagef("tcp --duration %v: must be positive, e.g. 10s", *dur)
	}
	if *window != "" {
		w, err := lab.ParseSize(*window)
		if err != nil || w == 0 {
			return usagef("tcp --window %q: want a size in bytes, e.g. 256k or 4m", *window)
		}
		plan.WindowBytes = int(w)
	}
	search := *bb == "search"
	if *bb != "" && !search {
		v, err := rate.ParseBits(*bb)
		if err != nil {
			return usagef("tcp --bb %q: %v; or --bb search to measure it", *bb, err)
		}
		plan.BottleneckBps, plan.BottleneckSource = v, "given (--bb)"
	}
	var bbc rfc2544.TCPBottleneckConfig
	if *lineRate != "" {
		v, err := rate.ParseBits(*lineRate)
		if err != nil || !(v > 0) {
			return usagef("tcp --line-rate %q: want a bit rate, e.g. 10G or 100mbit", *lineRate)
		}
		if plan.BottleneckBps != 0 {
			return usagef("tcp --line-rate: applies to the bottleneck search only; --bb %s gives the bottleneck", *bb)
		}
		bbc.LinkBps = v
	}
	if ag.Addr != "" || *tokenFile != "" || ag.Namespace != "" {
		switch {
		case ag.Addr == "":
			return usagef("tcp: --token-file, --netns: apply with --agent HOST[:PORT]")
		case lf.IsSet() || *src != "" || *dst != "":
			return usagef("tcp: --agent and --lab or --src/--dst: the agent is the far end; give one or the other")
		}
		if err := agent.CheckTCPPlan(plan.WindowBytes, plan.Streams, *both); err != nil {
			return usagef("%v", err)
		}
		a, _, err := rig.ParseAgent(rig.AgentInput{Addr: ag.Addr, TokenFile: *tokenFile, IPv6: agent.AddrIsIPv6(ag.Addr), Netns: ag.Namespace})
		if err != nil {
			return usagef("tcp: %v", err)
		}
		ag.Addr, ag.Token, ag.Reverse = a.Addr.String(), a.Token, *reverse
		if err := plan.Validate(); plan.BottleneckBps != 0 && err != nil {
			return usagef("%v", err)
		}
		if *dryRun {
			if !search && plan.BottleneckBps == 0 {
				*bb = "search"
			}
			return dry(fmt.Sprintf("this host and the agent at %s", ag.Addr), nil)
		}
		if *both {
			ag.Both = true
			res, err := agent.RunTCPTestBoth(ctx, ag, plan, bbc, stderr)
			if err != nil {
				return fmt.Errorf("tcp: %w", err)
			}
			return writeBoth(res)
		}
		res, err := agent.RunTCPTest(ctx, ag, plan, bbc, stderr)
		if err != nil {
			return fmt.Errorf("tcp: %w", err)
		}
		return write(res)
	}
	pair := trials.TCPPair{}
	// shaper gives a lab's bottleneck from its shaper, in one direction
	// (rev: B to A); nil where none stands in for the bottleneck.
	var shaper func(rev bool) (float64, string, error)
	switch {
	case lf.IsSet() && (*src != "" || *dst != ""):
		return usagef("tcp: --lab and --src/--dst: give one or the other")
	case lf.IsSet():
		name := lf.Name()
		var st *lab.State
		if lf.Temporary() {
			name = tempLabName()
			cfg, err := labf.Config(name)
			if err != nil {
				return usagef("tcp: %w", err)
			}
			if *dryRun {
				if err := checkTCPPlan(plan); err != nil {
					return err
				}
				return dry(fmt.Sprintf("ports A and B of a temporary lab %s, created and removed (%s)", name, cfg.Summary()),
					func(rev bool) float64 { return labShaperBps(cfg, rev) })
			}
			fmt.Fprintf(stderr, "creating temporary lab %s\n", name)
			if st, err = lab.Up(ctx, cfg); err != nil {
				return fmt.Errorf("tcp: %w", err)
			}
			defer func() {
				if err := lab.Down(name); err != nil {
					fmt.Fprintf(stderr, "tcp: removing lab %s: %v\n", name, err)
				} else {
					fmt.Fprintf(stderr, "removed temporary lab %s\n", name)
				}
			}()
		} else {
			var err error
			if st, err = lab.Load(name); err != nil {
				return fmt.Errorf("tcp: %w", err)
			}
		}
		pair.Base.Sender = trials.TCPEnd{Namespace: st.A.Namespace, Addr: st.A.IPv4.Addr()}
		pair.Base.Receiver = trials.TCPEnd{Namespace: st.B.Namespace, Addr: st.B.IPv4.Addr()}
		if plan.BottleneckBps == 0 && !search {
			// The shaper's rate counts each packet with its 14-byte
			// Ethernet header only (tbf); the search's rate, with the
			// frame's L1 overhead (TCPPlan's default).
			plan.OverheadBytes = rfc2544.LabShaperOverhead
			shaper = func(rev bool) (float64, string, error) {
				r, dir := labShaperBps(st.Config, rev), "A to B"
				if rev {
					dir = "B to A"
				}
				if r == 0 {
					return 0, "", usagef("tcp: lab %s is not shaped %s: give --bb RATE (the path's bottleneck) or --bb search (measure it), or shape the lab with --rate", st.Name, dir)
				}
				return float64(r), "the lab's shaper (" + dir + ")", nil
			}
		}
	default:
		s, err1 := netip.ParseAddr(*src)
		d, err2 := netip.ParseAddr(*dst)
		if err1 != nil || err2 != nil {
			return usagef("tcp: give --lab, or --src and --dst addresses of this host, e.g. --src 198.18.0.1 --dst 198.18.0.2")
		}
		pair.Base.Sender, pair.Base.Receiver = trials.TCPEnd{Addr: s}, trials.TCPEnd{Addr: d}
		if plan.BottleneckBps == 0 && !search {
			return usagef("tcp --src/--dst: give --bb RATE (the path's bottleneck, e.g. --bb 1G) or --bb search (measure it with the UDP throughput search)")
		}
	}
	if *reverse {
		pair.Base.Sender, pair.Base.Receiver = pair.Base.Receiver, pair.Base.Sender
	}
	// The ends' addresses now, before any traffic (the duration is the
	// plan's, checked below).
	check := pair.Base
	check.Duration = time.Second
	if err := check.Validate(); err != nil {
		return usagef("tcp: %v", err)
	}
	if err := checkTCPPlan(plan); err != nil {
		return err
	}
	if *dryRun {
		ends := fmt.Sprintf("%v and %v on this host", pair.Base.Sender.Addr, pair.Base.Receiver.Addr)
		if *reverse {
			ends = fmt.Sprintf("%v and %v on this host", pair.Base.Receiver.Addr, pair.Base.Sender.Addr)
		}
		var shaped func(bool) float64
		if shaper != nil {
			ends = "ports A and B of lab " + lf.Name()
			shaped = func(rev bool) float64 { r, _, _ := shaper(rev); return r }
		}
		return dry(ends, shaped)
	}
	if bbc.LinkBps == 0 {
		bbc.LinkBps = rig.NominalLineRate
	}
	// planFor is the plan of the direction from end from to end to: the
	// bottleneck given, the lab shaper's in that direction, or measured,
	// as RFC 6349 §3.2 has it, by the UDP throughput search from the
	// sender to the receiver.
	planFor := func(from, to trials.TCPEnd, rev bool) (rfc2544.TCPPlan, error) {
		p := plan
		var err error
		switch {
		case p.BottleneckBps != 0:
		case shaper != nil:
			p.BottleneckBps, p.BottleneckSource, err = shaper(rev)
		default:
			p.BottleneckBps, p.BottleneckSource, err = localBottleneck(ctx, from, to, bbc, stderr)
			if err != nil {
				err = fmt.Errorf("tcp: %w", err)
			}
		}
		return p, err
	}
	if *both {
		back := pair
		back.Base.Sender, back.Base.Receiver = pair.Base.Receiver, pair.Base.Sender
		var plans [2]rfc2544.TCPPlan
		for i, pr := range []trials.TCPPair{pair, back} {
			p, err := planFor(pr.Base.Sender, pr.Base.Receiver, i == 1)
			if err != nil {
				return err
			}
			plans[i] = p
			fmt.Fprintf(stderr, "tcp: %v -> %v, bottleneck %.6g Mbit/s (%s), %v transfer, both directions at once\n",
				pr.Base.Sender.Addr, pr.Base.Receiver.Addr, p.BottleneckBps/1e6, p.BottleneckSource, *dur)
		}
		res, err := rfc2544.RunTCPTestBoth(ctx, [2]rfc2544.TCPTester{pair, back}, plans)
		for i, pr := range []trials.TCPPair{pair, back} {
			res[i].Direction = fmt.Sprintf("%v -> %v, both directions at once", pr.Base.Sender.Addr, pr.Base.Receiver.Addr)
		}
		if err != nil {
			return fmt.Errorf("tcp: %w", err)
		}
		return writeBoth(res)
	}
	plan, err := planFor(pair.Base.Sender, pair.Base.Receiver, *reverse)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tcp: %v -> %v, bottleneck %.6g Mbit/s (%s), %v transfer\n",
		pair.Base.Sender.Addr, pair.Base.Receiver.Addr, plan.BottleneckBps/1e6, plan.BottleneckSource, *dur)
	res, err := rfc2544.RunTCPTest(ctx, pair, plan)
	if err != nil {
		return fmt.Errorf("tcp: %w", err)
	}
	return write(res)
}

// localBottleneck finds the bottleneck bandwidth from end from to end to
// (namespaces or this host's addresses) with the UDP throughput search
// (rfc2544.BottleneckByThroughput) on the udp transport.
func localBottleneck(ctx context.Context, from, to trials.TCPEnd, c rfc2544.TCPBottleneckConfig, logw io.Writer) (float64, string, error) {
	end := func(e trials.TCPEnd) trials.UDPPortConfig {
		if e.Addr.Is6() {
			return trials.UDPPortConfig{Namespace: e.Namespace, Addr6: e.Addr}
		}
		return trials.UDPPortConfig{Namespace: e.Namespace, Addr: e.Addr}
	}
	u, err := trials.OpenUDP(ctx, trials.UDPConfig{A: end(from), B: end(to)})
	if err != nil {
		return 0, "", fmt.Errorf("bottleneck search: %w", err)
	}
	defer u.Close()
	fmt.Fprintf(logw, "tcp: bottleneck bandwidth: UDP throughput search %v -> %v, up to %.6g Mbit/s\n", from.Addr, to.Addr, c.LinkBps/1e6)
	return rfc2544.BottleneckByThroughput(ctx, u, c)
}

// checkTCPPlan validates plan before any traffic; a bottleneck still to be
// read from the lab's shaper or measured (zero) is not checked.
func checkTCPPlan(plan rfc2544.TCPPlan) error {
	if plan.BottleneckBps == 0 {
		plan.BottleneckBps = 1 // for Validate; the shaper or the search sets it
	}
	if err := plan.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// labShaperBps is a lab's shaped rate A to B (B to A with rev), bits/s,
// of the kernel DUT's tbf or the relay's own bucket; zero when unshaped. c
// is a lab's config as given or as the lab holds it.
func labShaperBps(c lab.Config, rev bool) float64 {
	r, relay := c.AtoB.RateBps, c.Relay.RateABBps
	if rev {
		r, relay = c.BtoA.RateBps, c.Relay.RateBABps
	}
	if c.DUT == lab.DUTRelay && relay != 0 {
		r = relay
	}
	return float64(r)
}

// applyTCPPlan sets the flags of 'rfc2544 tcp' not given on the command
// line from the tcp section of the plan file at path; a bad value is a
// usage error naming the plan's field and the fix.
func applyTCPPlan(fs *flag.FlagSet, path string) error {
	p, _, err := rfc2544.LoadPlan(path, rfc2544.Plan{})
	if err != nil {
		return usagef("tcp --plan: %v", err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	s := p.TCP
	bad := func(field, value, fix string) error {
		return usagef("tcp --plan %s: tcp.%s %s: %s", quoteShort(path), field, quoteShort(value), fix)
	}
	set := map[string]string{}
	if v := s.Bottleneck; v != "" && v != "search" {
		if _, err := rate.ParseBits(v); err != nil {
			return bad("bottleneck", v, fmt.Sprintf("%v; or search to measure it", err))
		}
	}
	set["bb"] = s.Bottleneck
	if v := s.LineRate; v != "" {
		if r, err := rate.ParseBits(v); err != nil || !(r > 0) {
			return bad("line_rate", v, "want a bit rate, e.g. 10G or 100mbit")
		}
	}
	set["line-rate"] = s.LineRate
	if v := s.Window; v != "" {
		if w, err := lab.ParseSize(v); err != nil || w == 0 {
			return bad("window", v, "want a size in bytes, e.g. 256k or 4m")
		}
	}
	set["window"] = s.Window
	if s.Streams < 0 {
		return bad("streams", fmt.Sprint(s.Streams), "want a number of connections, e.g. 4, or leave it out to size it from the BDP")
	}
	if s.Streams > 0 {
		set["streams"] = fmt.Sprint(s.Streams)
	}
	if s.Duration < 0 {
		return bad("duration", s.Duration.String(), "want a positive duration, e.g. 10s")
	}
	if s.Duration > 0 {
		set["duration"] = s.Duration.String()
	}
	switch s.Direction {
	case "", "a-to-b":
	case "b-to-a":
		if !given["both"] {
			set["reverse"] = "true"
		}
	case "both":
		if !given["reverse"] {
			set["both"] = "true"
		}
	default:
		return bad("direction", s.Direction, "want a-to-b, b-to-a or both")
	}
	for name, v := range set {
		if v == "" || given[name] {
			continue // the flag overrides the plan
		}
		if err := fs.Set(name, v); err != nil {
			return bad(strings.ReplaceAll(name, "-", "_"), v, err.Error())
		}
	}
	return nil
}

// tcpDry is what 'rfc2544 tcp --dry-run' prints.
type tcpDry struct {
	ends                 string
	bb, lineRate, window string
	streams              int
	dur                  time.Duration
	reverse, both        bool
	shaped               func(rev bool) float64 // the lab's shaper, nil without one
}

// tcpDryRun prints the effective test as a plan file (its tcp section, the
// rest YAML comments) or, with asJSON, as JSON; it creates and sends
// nothing.
func tcpDryRun(w io.Writer, asJSON bool, d tcpDry) error {
	sec := rfc2544.TCPSection{Bottleneck: d.bb, LineRate: d.lineRate, Window: d.window, Streams: d.streams, Duration: rfc2544.Duration(d.dur), Direction: "a-to-b"}
	dirs := []bool{false}
	switch {
	case d.both:
		sec.Direction, dirs = "both", []bool{false, true}
	case d.reverse:
		sec.Direction, dirs = "b-to-a", []bool{true}
	}
	var bbNotes []string
	for _, rev := range dirs {
		name := map[bool]string{false: "A to B", true: "B to A"}[rev]
		switch {
		case d.bb == "search":
			line := d.lineRate
			if line == "" {
				line = "its default line rate"
			}
			bbNotes = append(bbNotes, fmt.Sprintf("%s: measured first, by the UDP throughput search at 1518 B up to %s", name, line))
		case d.bb != "":
			bbNotes = append(bbNotes, fmt.Sprintf("%s: %s, given", name, d.bb))
		case d.shaped != nil && d.shaped(rev) > 0:
			bbNotes = append(bbNotes, fmt.Sprintf("%s: %s, the lab's shaper", name, formatBitRate(d.shaped(rev))))
		default:
			bbNotes = append(bbNotes, fmt.Sprintf("%s: none known (the test would stop: give --bb RATE or --bb search)", name))
		}
	}
	sizing := "window and connections sized from the BDP (window = 1.2 × BDP per connection, at most 16 MiB each)"
	switch {
	case d.window != "" && d.streams > 0:
		sizing = fmt.Sprintf("window %s per connection, %d connections, as given", d.window, d.streams)
	case d.window != "":
		sizing = fmt.Sprintf("window %s per connection, as given; connections sized from the BDP", d.window)
	case d.streams > 0:
		sizing = fmt.Sprintf("%d connections, as given; their window sized from the BDP", d.streams)
	}
	if asJSON {
		out := struct {
			Ends       string             `json:"ends"`
			Bottleneck []string           `json:"bottleneck"`
			Sizing     string             `json:"sizing"`
			TCP        rfc2544.TCPSection `json:"tcp"`
		}{d.ends, bbNotes, sizing, sec}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# rfc2544 tcp --dry-run: the effective test; nothing was created or sent.\n")
	fmt.Fprintf(&b, "# ends: %s\n", d.ends)
	for _, n := range bbNotes {
		fmt.Fprintf(&b, "# bottleneck %s\n", n)
	}
	fmt.Fprintf(&b, "# steps (RFC 6349): path MTU and MSS, the idle path's RTT, BDP = bottleneck × RTT; then %s; a %v transfer", sizing, d.dur)
	if d.both {
		b.WriteString(" each way at once")
	}
	b.WriteString("; throughput against the maximum for the MSS, transfer time ratio, TCP efficiency, buffer delay\n")
	y, err := yaml.Marshal(struct {
		TCP rfc2544.TCPSection `yaml:"tcp"`
	}{sec})
	if err != nil {
		return err
	}
	b.Write(y)
	_, err = io.WriteString(w, b.String())
	return err
}
