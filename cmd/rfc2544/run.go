package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// The run verb and the one-test verbs (throughput, latency, loss, b2b) share
// their flags and their whole flow; a one-test verb is run with --tests fixed.

// testVerbs are the one-test verbs.
var testVerbs = []struct {
	name, summary string
	test          rfc2544.Test
}{
	{"throughput", "run the throughput test (RFC 2544 §26.1) only", rfc2544.TestThroughput},
	{"latency", "run the latency test (RFC 2544 §26.2) only", rfc2544.TestLatency},
	{"loss", "run the frame loss rate test (RFC 2544 §26.3) only", rfc2544.TestFrameLoss},
	{"b2b", "run the back-to-back test (RFC 2544 §26.4, RFC 9004) only", rfc2544.TestBackToBack},
}

// Transports (rig's).
const (
	transportRaw = rig.Raw
	transportUDP = rig.UDP
	transportXDP = rig.XDP
	transportSim = rig.Sim
)

// runFlags are the parsed flags of a run.
type runFlags struct {
	fs *flag.FlagSet

	sizes, tests, profile, planFile, out, resume    string
	transport, search, lineRate, maxRate            string
	jumbo, json, bidir, ipv6, quiet, dryRun         bool
	jsonStream                                      bool
	noProbe, allowAny, force, overwrite             bool
	duration, settle, learning, rest                rfc2544.Duration
	latencyDuration, b2bCap                         rfc2544.Duration
	resolution, lossTolerance, lossStep             percentFlag
	latencyReps, b2bReps, maxTrials, flows, retries int
	calibration                                     string
	simCapacity                                     float64
	simMTU                                          int
	goals                                           string
	allowBuffering                                  bool
	maxLatency                                      durationFlag
	latencyPercentile                               float64
	lab                                             labFlag
	portA, portB                                    rig.PortInput
	labFlags                                        *lab.Flags
	agentF                                          agentFlags
}

func newRunFlags(verb string, fixed []rfc2544.Test) *runFlags {
	f := &runFlags{fs: flag.NewFlagSet(verb, flag.ContinueOnError)}
	fs := f.fs
	fs.SetOutput(io.Discard)
	if fixed == nil {
		fs.StringVar(&f.tests, "tests", "all", "`list` of tests to run, comma-separated: throughput, latency, loss, b2b, recovery or all")
	}
	fs.StringVar(&f.sizes, "sizes", "", "frame `sizes` in bytes with FCS, comma-separated (default 64,128,256,512,1024,1280,1518)")
	fs.BoolVar(&f.jumbo, "jumbo", false, "add the jumbo sizes 2048,4096,8192,9018 (sizes the path cannot carry report zero throughput)")
	fs.TextVar(&f.duration, "duration", rfc2544.Duration(0), "trial `duration` of throughput and frame loss trials, e.g. 60s")
	fs.StringVar(&f.profile, "profile", "", "preset `name`: rfc2544 (the standard's durations) or quick (short trials); default rfc2544, quick for a temporary lab")
	fs.StringVar(&f.planFile, "plan", "", "YAML test plan `file` (see testdata/plans); flags override it")
	fs.StringVar(&f.out, "out", "", "output `folder` for journal.jsonl, results.json and reports (default rfc2544-results-TIME)")
	fs.BoolVar(&f.overwrite, "overwrite", false, "replace the run files (journal, results, reports) of an earlier run in --out; without it an --out that exists and is not empty is refused")
	fs.StringVar(&f.resume, "resume", "", "continue the interrupted run in `folder` without repeating finished trials")
	fs.BoolVar(&f.json, "json", false, "write results as JSON to stdout and nothing else there")
	fs.BoolVar(&f.jsonStream, "json-stream", false, "write the run as it goes to stdout, one JSON object a line (iperf3's convention): start, an interval a second of each trial, each trial's end, the end with the results")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the effective plan and the checks, send nothing")
	fs.StringVar(&f.transport, "transport", "", "how traffic is made (`name`): raw (AF_PACKET, default), udp (kernel UDP sockets: any routed path, no root without namespaces; --addr-a/--addr-b alone), xdp (AF_XDP on two ports: root, Linux with XDP) or sim (simulated DUT, no root)")
	fs.StringVar(&f.search, "search", "", "throughput search `mode`: mlr (RFC 9971: NDR and PDR in one search, the default), binary, step or combo")
	fs.Var(&f.resolution, "resolution", "binary search resolution in `percent` points of line rate, e.g. 0.5, or relative to the highest pass with a %, e.g. 0.5% (the default)")
	fs.StringVar(&f.goals, "goals", "", "mlr search goals as `NAME=LOSS%` pairs, comma-separated, e.g. NDR=0,PDR=0.5% (default: the profile's)")
	fs.BoolVar(&f.allowBuffering, "allow-buffering", false, "let a zero-loss trial whose queue grew through the trial (not sustained) pass")
	fs.Var(&f.maxLatency, "max-latency", "latency-bounded throughput: a trial whose latency exceeds this `duration` fails, e.g. 30us")
	fs.Float64Var(&f.latencyPercentile, "latency-percentile", 0, "the latency `percentile` --max-latency bounds: 50, 90, 99, 99.9 or 100 (the maximum, default)")
	fs.Var(&f.lossTolerance, "loss-tolerance", "acceptable frame loss in `percent` (0 = RFC 2544 zero loss)")
	fs.Var(&f.lossStep, "loss-step", "frame loss test load step in `percent`, e.g. 10")
	fs.TextVar(&f.settle, "settle", rfc2544.Duration(0), "wait for late frames after each trial (`duration`, RFC 2544: 2s)")
	fs.TextVar(&f.learning, "learning", rfc2544.Duration(0), "wait after learning frames (`duration`, RFC 2544: 2s)")
	fs.TextVar(&f.rest, "rest", rfc2544.Duration(0), "idle time between trials (`duration`)")
	fs.TextVar(&f.latencyDuration, "latency-duration", rfc2544.Duration(0), "latency stream `duration` (RFC 2544: 120s)")
	fs.IntVar(&f.latencyReps, "latency-reps", 0, "latency repetitions (RFC 2544: 20)")
	fs.TextVar(&f.b2bCap, "b2b-cap", rfc2544.Duration(0), "longest back-to-back burst `duration` (RFC 9004: 2s)")
	fs.IntVar(&f.b2bReps, "b2b-reps", 0, "back-to-back repetitions (RFC 2544: 50)")
	fs.IntVar(&f.maxTrials, "max-trials", 0, "cap on the trials of one throughput search")
	fs.IntVar(&f.retries, "retries", 0, "`times` a trial is run again when this host stalled the generator (a transient tester limit, never DUT loss): 0 (or -1) never, at most 10 (default 2); a plan's trial.retries reads the same")
	fs.IntVar(&f.flows, "flows", 0, "UDP flows per stream, so a multi-queue DUT spreads the load")
	fs.BoolVar(&f.bidir, "bidir", false, "send from both ports at once (RFC 2544 §14)")
	fs.BoolVar(&f.ipv6, "ipv6", false, "IPv6/UDP test frames (RFC 5180)")
	fs.BoolVar(&f.noProbe, "no-probe", false, "skip the short low-rate path probe before each frame size")
	fs.StringVar(&f.lineRate, "line-rate", "", "line `rate` percentages refer to, e.g. 10G (default: the interface speed; 1G nominal for a lab/veth and sim)")
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
	fs.StringVar(&f.calibration, "calibration", "", "tester ceilings `file` from 'rfc2544 calibrate --json': trials at or above the ceiling that lose frames are tester-limited")
	fs.BoolVar(&f.allowAny, "allow-any-destination", false, "allow test addresses outside 198.18.0.0/15 and 2001:2::/48 (RFC 6815: isolated networks only)")
	fs.BoolVar(&f.force, "force", false, "allow a port that carries the host's default route")
	fs.Func("sim-capacity", "sim: the simulated DUT's forwarding `rate` per direction, e.g. 500M (default 80% of the line rate)", func(v string) error {
		bps, err := parseBitRate("--sim-capacity", v)
		f.simCapacity = bps
		return err
	})
	fs.IntVar(&f.simMTU, "sim-mtu", 0, "sim: the simulated path's IP MTU in `bytes`, 68 to 65535 (default 1500)")
	f.labFlags = lab.AddFlags(fs)
	f.agentF.register(fs)
	return f
}

// labSettingFlags are the flags lab.AddFlags registers: they shape a
// temporary lab and mean nothing otherwise.
var labSettingFlags = []string{"topology", "dut", "rate", "rate-ab", "rate-ba", "burst", "burst-ab", "burst-ba",
	"limit", "limit-ab", "limit-ba", "loss", "loss-ab", "loss-ba", "delay", "jitter", "reorder", "reorder-gap",
	"duplicate", "seed", "fw-rules", "mtu", "mtu-a", "mtu-b", "no-rps"}

// resumeFlags may accompany --resume; everything else comes from the journal.
var resumeFlags = []string{"resume", "json", "json-stream", "quiet"}

func (f *runFlags) set() map[string]bool {
	m := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { m[fl.Name] = true })
	return m
}

// parseRunArgs parses args into flags; --help is reported as flag.ErrHelp.
func parseRunArgs(verb string, fixed []rfc2544.Test, args []string) (*runFlags, error) {
	f := newRunFlags(verb, fixed)
	if err := f.fs.Parse(fixLabArg(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%s: %s; run 'rfc2544 %s --help' for the flags", verb, flagError(err), verb)
	}
	if f.fs.NArg() > 0 {
		return nil, usagef("%s: unexpected argument %s: every setting is a flag (e.g. --sizes 64,1518); run 'rfc2544 %s --help'", verb, quoteShort(f.fs.Arg(0)), verb)
	}
	return f, nil
}

// flagError rewrites the flag package's messages to name the flag the way
// users write it (--name).
func flagError(err error) string {
	s := err.Error()
	// The flag package quotes a bad value whole: quote at most ~100 bytes.
	const invalid = "invalid value "
	if rest, ok := strings.CutPrefix(s, invalid); ok {
		if q, qerr := strconv.QuotedPrefix(rest); qerr == nil {
			if v, uerr := strconv.Unquote(q); uerr == nil {
				s = invalid + quoteShort(v) + rest[len(q):]
			}
		}
	}
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: -"); ok && len(name) > maxQuote {
		s = "flag provided but not defined: -" + name[:maxQuote] + "..."
	}
	s = strings.Replace(s, "flag provided but not defined: -", "unknown flag --", 1)
	s = strings.Replace(s, "for flag -", "for --", 1)
	s = strings.Replace(s, "flag needs an argument: -", "flag needs a value: --", 1)
	return s
}

// runSetup is everything a run needs, checked, before anything is created.
type runSetup struct {
	agent     *rig.Agent // --agent: port B is a remote agent
	verb      string
	flags     *runFlags
	plan      rfc2544.Plan
	transport string
	lineNote  string // how the line rate was chosen, for the output
	linkGiven bool   // the plan file sets link_bps (even to 0)
	capBps    float64
	capNote   string
	ports     []rig.Port // explicit ports (not a lab)
	labName   string     // a named lab, or "" (see tempLab)
	tempLab   bool
	labCfg    lab.Config                // the temporary lab's settings
	ceilings  []trials.CalibrationPoint // from --calibration
	out       string
	resume    *rfc2544.JournalContents
	args      []string // the command line to journal (no --out, --resume)
}

func runVerb(ctx context.Context, verb string, fixed []rfc2544.Test, args []string, stdout, stderr io.Writer) error {
	f, err := parseRunArgs(verb, fixed, args)
	if errors.Is(err, flag.ErrHelp) {
		printRunHelp(stdout, verb, fixed)
		return nil
	}
	if err != nil {
		return err
	}
	if f.resume != "" {
		// Locked before the journal is read: one writer per journal.
		l, err := lockOut("--resume", f.resume)
		if err != nil {
			return err
		}
		defer l.unlock()
	}
	if sweep, err := f.labFlags.Sweep(); err != nil || sweep != nil {
		return runSweep(ctx, verb, fixed, f.out, sweep, err, args, stdout, stderr)
	}
	s, err := setupRun(verb, fixed, f, args)
	if err != nil {
		return err
	}
	if f.dryRun {
		return dryRun(ctx, s, stdout)
	}
	if s.resume == nil {
		if err := os.MkdirAll(s.out, 0o755); err != nil {
			return usagef("--out %s: cannot create the folder: %w", s.out, err)
		}
		l, err := lockOut("--out", s.out)
		if err != nil {
			return err
		}
		defer l.unlock()
		// Checked again under the lock: another run may have started
		// since setupRun looked.
		if err := checkOutFree(s.out, f.overwrite); err != nil {
			return err
		}
		if f.overwrite {
			if err := clearRunFiles(s.out); err != nil {
				return err
			}
		}
	}
	return execute(ctx, s, stdout, stderr)
}
