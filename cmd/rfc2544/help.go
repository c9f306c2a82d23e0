package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// printRunHelp writes the --help of run and the one-test verbs: what the
// verb does, examples, then every flag by group.
func printRunHelp(w io.Writer, verb string, fixed []rfc2544.Test) {
	scope := "the whole suite"
	what := "runs the selected RFC 2544 tests (default: throughput, latency,\nloss, b2b) over the selected frame sizes"
	if fixed != nil {
		scope = fmt.Sprintf("the %s test", fixed[0])
		what = fmt.Sprintf("runs the %s test only (latency and b2b first\nfind the throughput they run at)", fixed[0])
	}
	fmt.Fprintf(w, `Usage: rfc2544 %[1]s [flags]

rfc2544 %[1]s %[2]s,
writes journal.jsonl, results.json and report.txt to --out, and prints
the tables (or the results as JSON with --json). --out must be new or empty
(--overwrite replaces an earlier run's files); a run or resume locks it, so a
second one of the same folder fails at once. Ctrl-C, SIGTERM and SIGHUP stop
the current trial and write partial results; a resume that fails before it
gets past the journal leaves the earlier results as they were.

Examples:
  # %[3]s on a temporary virtual lab (root), quick profile
  sudo rfc2544 %[1]s --lab
  # a few sizes on a lab shaped to 200 Mbit/s
  sudo rfc2544 %[1]s --lab --rate 200mbit --sizes 64,512,1518
  # a real two-port DUT, RFC 2544 durations, a 10G line
  sudo rfc2544 %[1]s --port-a enp1s0f0 --addr-a 198.18.1.2/24 --gw-a 198.18.1.1 \
      --port-b enp1s0f1 --addr-b 198.19.1.2/24 --gw-b 198.19.1.1 --line-rate 10G --out dut1
  # try the tool without root on the simulated DUT
  rfc2544 %[1]s --transport sim --profile quick --sizes 64,1518
  # show the effective plan of a plan file, send nothing
  rfc2544 %[1]s --transport sim --plan testdata/plans/quick.yaml --dry-run
  # continue an interrupted run
  sudo rfc2544 %[1]s --resume dut1

Exit codes: 0 ok, 1 test error, 2 usage error, 3 tester-limited result,
130 interrupted (partial results written; continue with --resume).
`, verb, what, scope)
	f := newRunFlags(verb, fixed)
	groups := []struct {
		title string
		names []string
	}{
		{"What to run", []string{"tests", "sizes", "jumbo", "profile", "plan", "duration", "search", "goals", "resolution", "allow-buffering", "max-latency", "latency-percentile", "loss-tolerance",
			"max-trials", "retries", "loss-step", "latency-duration", "latency-reps", "b2b-cap", "b2b-reps", "learning", "settle", "rest",
			"bidir", "ipv6", "flows", "no-probe", "line-rate"}},
		{"Where: a lab, two ports, or the simulator", []string{"lab", "transport", "port-a", "addr-a", "gw-a", "netns-a", "addr6-a", "gw6-a",
			"port-b", "addr-b", "gw-b", "netns-b", "addr6-b", "gw6-b", "queues", "calibration", "sim-capacity", "sim-mtu"}},
		{"Two hosts: a remote agent as port B (udp)", []string{"agent", "token-file", "local", "reverse", "clock-sync"}},
		{"Temporary lab settings (with --lab and no name; none given: the reference DUT, shaped to 30 Mbit/s over a 100-packet queue on a 60 Mbit/s line, its answers printed beside the results; --rate 0: unshaped)", labSettingFlags},
		{"Safety (RFC 6815)", []string{"max-rate", "allow-any-destination", "force"}},
		{"Output", []string{"out", "overwrite", "json", "json-stream", "quiet", "dry-run", "resume"}},
	}
	// Flags no group lists (added by other verbs' code) still show.
	listed := map[string]bool{}
	for _, g := range groups {
		for _, n := range g.names {
			listed[n] = true
		}
	}
	var other []string
	f.fs.VisitAll(func(fl *flag.Flag) {
		if !listed[fl.Name] {
			other = append(other, fl.Name)
		}
	})
	if len(other) > 0 {
		groups = append(groups, struct {
			title string
			names []string
		}{"Other", other})
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, n := range g.names {
			fl := f.fs.Lookup(n)
			if fl == nil {
				continue
			}
			value := ""
			if n == "lab" {
				value = "[NAME]"
			}
			printFlag(w, fl, value)
		}
	}
}
