package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rfc2544/rfc2544/lab"
)

const labUsage = `Usage: rfc2544 lab <up|down|status|list> [flags]

  lab up --name NAME [--rate 50mbit] [--limit 1000] [--loss 1%] [--delay 2ms]
         [--jitter 0.5ms] [--fw-rules 1000] [--fw-stateful] [--fw-set 10000]
         [--dut-backpressure] [--mtu 9000 | --mtu-a 9000 --mtu-b 1500]
         [--topology router|loop] [--dut kernel|relay]
  lab down --name NAME
  lab status --name NAME [--json]
  lab list

Examples:
  rfc2544 lab up --name demo --rate 50mbit
  rfc2544 lab up --name jumbo --mtu-a 9000 --mtu-b 1500
  rfc2544 lab up --name wan --dut relay --delay 10ms --jitter 1ms --loss 0.5%
  rfc2544 lab up --name fw --fw-rules 3000 --fw-stateful --fw-set 10000
  rfc2544 lab status --name demo
  rfc2544 lab down --name demo
`

func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, labUsage)
		if len(args) == 0 {
			return usagef("lab: no sub-command given: use up, down, status or list")
		}
		return nil
	}
	switch args[0] {
	case "up":
		return labUp(ctx, args[1:], stdout, stderr)
	case "down":
		return labDown(args[1:], stdout, stderr)
	case "status":
		return labStatus(args[1:], stdout, stderr)
	case "list":
		return labList(args[1:], stdout, stderr)
	case "relay":
		return labRelay(args[1:], stderr)
	}
	return usagef("lab: unknown sub-command %q: use up, down, status or list", args[0])
}

// labParseFlags parses fs and maps flag errors to usage errors.
func labParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // help printed: run returns nil
		}
		return usagef("lab %s: %s", fs.Name(), flagError(err))
	}
	if fs.NArg() > 0 {
		return usagef("lab %s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// labFlagSet is the flag set of 'lab name'; its help goes to stdout.
func labFlagSet(name string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	helpOn(fs, stdout, fmt.Sprintf("Usage: rfc2544 lab %s [flags]\n", name))
	return fs
}

func labUp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := labFlagSet("up", stdout)
	name := fs.String("name", "", "lab `name` (a-z, 0-9, '-'), e.g. demo")
	jsonOut := fs.Bool("json", false, "print the lab's state as JSON")
	lf := lab.AddFlags(fs)
	if err := labParseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := lf.Config(*name)
	if err != nil {
		return usagef("lab up: %w", err)
	}
	st, err := lab.Up(ctx, cfg)
	if err != nil {
		return fmt.Errorf("lab up: %w", err)
	}
	if *jsonOut {
		return labWriteJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "lab %q is up (%s", st.Name, st.Topology)
	if st.Topology == lab.TopologyRouter {
		fmt.Fprintf(stdout, ", %s DUT", st.DUT)
	}
	fmt.Fprintln(stdout, ")")
	return (&lab.Status{State: st}).WriteText(stdout)
}

func labDown(args []string, stdout, stderr io.Writer) error {
	fs := labFlagSet("down", stdout)
	name := fs.String("name", "", "lab `name`")
	if err := labParseFlags(fs, args); err != nil {
		return err
	}
	if err := lab.ValidateName(*name); err != nil {
		return usagef("lab down: %w", err)
	}
	if err := lab.Down(*name); err != nil {
		return fmt.Errorf("lab down: %w", err)
	}
	fmt.Fprintf(stdout, "lab %q is down\n", *name)
	return nil
}

func labStatus(args []string, stdout, stderr io.Writer) error {
	fs := labFlagSet("status", stdout)
	name := fs.String("name", "", "lab `name`")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := labParseFlags(fs, args); err != nil {
		return err
	}
	if err := lab.ValidateName(*name); err != nil {
		return usagef("lab status: %w", err)
	}
	st, err := lab.ReadStatus(*name)
	if err != nil {
		return fmt.Errorf("lab status: %w", err)
	}
	if *jsonOut {
		return labWriteJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "lab %q: %s topology", st.State.Name, st.State.Topology)
	if st.State.Topology == lab.TopologyRouter {
		fmt.Fprintf(stdout, ", %s DUT", st.State.DUT)
	}
	fmt.Fprintf(stdout, ", up since %s\n", st.State.Created.Format(time.RFC3339))
	return st.WriteText(stdout)
}

func labList(args []string, stdout, stderr io.Writer) error {
	fs := labFlagSet("list", stdout)
	if err := labParseFlags(fs, args); err != nil {
		return err
	}
	names, err := lab.List()
	if err != nil {
		return fmt.Errorf("lab list: %w", err)
	}
	if len(names) == 0 {
		fmt.Fprintln(stdout, "no labs are up")
		return nil
	}
	return lab.WriteList(stdout, names)
}

func labRelay(args []string, stderr io.Writer) error {
	fs := labFlagSet("relay", stderr)
	name := fs.String("name", "", "lab `name`")
	if err := labParseFlags(fs, args); err != nil {
		return err
	}
	if err := lab.ValidateName(*name); err != nil {
		return usagef("lab relay: %w", err)
	}
	if code := lab.RunRelay(*name); code != 0 {
		return fmt.Errorf("lab relay: exited with status %d", code)
	}
	return nil
}

func labWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
