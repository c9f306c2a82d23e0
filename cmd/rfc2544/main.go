package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/rfc2544/rfc2544/internal/atexit"
	"github.com/rfc2544/rfc2544/lab/relay"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/rig"
)

// Exit codes, documented in the README.
const (
	exitOK            = 0
	exitTestError     = 1
	exitUsage         = 2
	exitTesterLimited = 3
	// exitInterrupted is the shell's 128+SIGINT: the run was stopped by
	// Ctrl-C (or SIGTERM or SIGHUP) and wrote partial results.
	exitInterrupted = 130
)

// usageError marks an error caused by bad input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// verb is one subcommand; each lives in its own file.
type verb struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// verbTable lists the subcommands.
func verbTable() map[string]verb {
	v := map[string]verb{
		"run": {"run RFC 2544 tests (default all) against a DUT, the lab or the simulator",
			func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
				return runVerb(ctx, "run", nil, args, stdout, stderr)
			}},
		"agent":     {"run the far end of a two-host test (port B), controlled over an authenticated channel", agentVerb},
		"calibrate": {"measure this machine's tester ceiling (frames/s per frame size) on a lab loop", runCalibrate},
		"compare":   {"show runs side by side (e.g. 1500 vs 9000 MTU: values, delta, ratio; or N rule counts: one line each)", compareVerb},
		"gen":       {"(benchmark) send test frames on one interface with the engine's generator, no receiver", runGen},
		"lab":       {"build, inspect and remove the built-in virtual lab (up, down, status, list)", runLab},
		"probe":     {"say what this host's kernel offers the lab and the transports (qdiscs, nftables, AF_XDP's receive stamps)", runProbe},
		"report":    {"re-render a results file as tables, JSON, CSV, HTML or charts, without re-running", reportVerb},
		"tcp":       {"RFC 6349 TCP throughput test (path MTU, RTT, BDP-sized windows, transfer time ratio, efficiency, buffer delay)", runTCPVerb},
	}
	for _, t := range testVerbs {
		v[t.name] = verb{t.summary, func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runVerb(ctx, t.name, []rfc2544.Test{t.test}, args, stdout, stderr)
		}}
	}
	return v
}

func main() {
	relay.Enter() // a lab's relay DUT is a copy of this program
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	finished := make(chan struct{})
	verbName := ""
	if len(os.Args) > 1 {
		verbName = os.Args[1]
	}
	if verbName == "lab" && len(os.Args) > 2 {
		verbName += " " + os.Args[2] // lab up stops gracefully, the others at once
	}
	go handleSignals(verbName, sigs, cancel, finished, os.Stderr, func() { os.Exit(exitInterrupted) })
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(finished)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// stopNotes says, per verb, what the first Ctrl-C, SIGTERM or SIGHUP does:
// the verb's ctx is cancelled and it stops gracefully. A verb not listed
// (report, compare, help) has nothing to stop or save: the first signal
// ends it at once.
var stopNotes = map[string]string{
	"run":        "stopping the current trial, writing partial results and cleaning up",
	"throughput": "stopping the current trial, writing partial results and cleaning up",
	"latency":    "stopping the current trial, writing partial results and cleaning up",
	"loss":       "stopping the current trial, writing partial results and cleaning up",
	"b2b":        "stopping the current trial, writing partial results and cleaning up",
	"calibrate":  "stopping the measurement",
	"gen":        "stopping the generator",
	"tcp":        "stopping the transfer and cleaning up",
	"lab up":     "stopping; what the lab built so far is removed",
	"agent":      "ending the session and closing the listener",
}

// handleSignals turns the first signal into a graceful stop of verb (ctx
// cancelled) or, for a verb with nothing to stop, an exit at once; a second
// signal always exits at once, but only after what must not outlive the
// process (a temporary lab, temporary files) is gone.
func handleSignals(verb string, sigs <-chan os.Signal, cancel func(), finished <-chan struct{}, stderr io.Writer, exit func()) {
	var sig os.Signal
	select {
	case sig = <-sigs:
	case <-finished:
		return
	}
	note, graceful := stopNotes[verb]
	if !graceful {
		fmt.Fprintf(stderr, "\nrfc2544: %s: exiting\n", signalName(sig))
		atexit.Run()
		exit()
		return
	}
	cancel()
	fmt.Fprintf(stderr, "\nrfc2544: %s: %s; press Ctrl-C again to exit at once\n", signalName(sig), note)
	select {
	case sig = <-sigs:
		msg := ""
		if strings.Contains(note, "partial results") {
			msg = "; partial results are in the journal"
		}
		fmt.Fprintf(stderr, "rfc2544: %s again: exiting now%s\n", signalName(sig), msg)
		atexit.Run()
		exit()
	case <-finished:
	}
}

// signalName is how a signal is named in messages.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	case syscall.SIGHUP:
		return "hangup (SIGHUP)"
	}
	return fmt.Sprint(sig)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "rfc2544:", err)
	var ue usageError
	var ie *rig.InputError
	switch {
	case errors.As(err, &ue), errors.As(err, &ie):
		return exitUsage
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.Is(err, errTesterLimited):
		return exitTesterLimited
	}
	return exitTestError
}

// errTesterLimited is returned by verbs whose results are tester-limited.
var errTesterLimited = errors.New("results are tester-limited: the tester, not the DUT, set the limit")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	if args[0] == "version" || args[0] == "--version" || args[0] == "-version" {
		return printVersion(stdout, args[1:])
	}
	v, ok := verbTable()[args[0]]
	if !ok {
		return usagef("unknown command %q: run 'rfc2544 help' for the list", args[0])
	}
	if err := v.run(ctx, args[1:], stdout, stderr); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil // a verb that printed its help
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: rfc2544 <command> [flags]\n\nCommands:")
	verbs := verbTable()
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, verbs[n].summary)
	}
	fmt.Fprintf(w, "  %-12s %s\n", "version", "print the module version, VCS revision and Go version (also --version)")
	fmt.Fprintln(w, "\nRun 'rfc2544 <command> --help' for a command's flags and examples.")
}
