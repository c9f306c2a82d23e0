package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
)

// Exit codes, documented in the README.
const (
	exitOK            = 0
	exitTestError     = 1
	exitUsage         = 2
	exitTesterLimited = 3
	// exitInterrupted is the shell's 128+SIGINT: the run was stopped by
	// Ctrl-C (or SIGTERM) and wrote partial results.
	exitInterrupted = 130
)

// usageError marks an error caused by bad input: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// verb is one subcommand; each lives in its own file and registers itself.
type verb struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var verbs = map[string]verb{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	verbs[name] = verb{summary: summary, run: run}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			// The first Ctrl-C cancels ctx: the current trial stops, partial
			// results are written, a temporary lab is removed.
			cancel()
			fmt.Fprintln(os.Stderr, "\nrfc2544: interrupted: stopping the current trial, writing partial results and cleaning up; press Ctrl-C again to exit at once")
		case <-finished:
			return
		}
		select {
		case <-sigs:
			// The second exits at once, but only after what must not
			// outlive the run (a temporary lab's namespaces) is gone.
			fmt.Fprintln(os.Stderr, "rfc2544: interrupted again: exiting now; partial results are in the journal")
			runExitHooks()
			os.Exit(exitInterrupted)
		case <-finished:
		}
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(finished)
	cancel()
	os.Exit(exitCode(err, os.Stderr))
}

// exitHooks undo what must not outlive the process even when a second
// Ctrl-C ends it at once: a temporary lab. Each runs at most once, from its
// own cleanup or from runExitHooks, and one that is running is waited for.
var exitHooks struct {
	sync.Mutex
	list []*exitHook
}

type exitHook struct {
	once sync.Once
	fn   func()
}

// onExit registers fn and returns the function that runs it (at most once).
func onExit(fn func()) func() {
	h := &exitHook{fn: fn}
	exitHooks.Lock()
	exitHooks.list = append(exitHooks.list, h)
	exitHooks.Unlock()
	return func() { h.once.Do(h.fn) }
}

// runExitHooks runs every registered hook that has not run yet, newest
// first, and waits for one already running.
func runExitHooks() {
	exitHooks.Lock()
	list := append([]*exitHook(nil), exitHooks.list...)
	exitHooks.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].once.Do(list[i].fn)
	}
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "rfc2544:", err)
	var ue usageError
	switch {
	case errors.As(err, &ue):
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
	v, ok := verbs[args[0]]
	if !ok {
		return usagef("unknown command %q: run 'rfc2544 help' for the list", args[0])
	}
	return v.run(ctx, args[1:], stdout, stderr)
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: rfc2544 <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, verbs[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'rfc2544 <command> --help' for a command's flags and examples.")
}
