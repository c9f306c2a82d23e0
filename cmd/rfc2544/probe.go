package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/rig"
	"github.com/rfc2544/rfc2544/trials"
)

// runProbe prints what this host's kernel offers the lab and the
// transports, each feature tried the way the product uses it.
func runProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	helpOn(fs, stdout, `Usage: rfc2544 probe

Tries, as root, each kernel feature the lab and the transports use, and
prints what this host has: the kernel release and CPUs; the lab's qdiscs
(tbf shapes, netem delays) and nftables (loss, firewall rules); AF_XDP's
XDP program with each receive stamp (metadata, in front of the frame, the
receiver's clock) and the one the xdp transport takes. Nothing is sent.`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("probe takes no arguments, got %q", fs.Arg(0))
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(stdout, "kernel      %s, %d CPUs\n", kernelName(), runtime.NumCPU())
	if os.Geteuid() != 0 {
		fmt.Fprintln(stdout, "(not root: the lab and AF_XDP probes need root)")
	}
	if f, err := lab.Probe(); err != nil {
		fmt.Fprintf(stdout, "lab         cannot probe: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "lab         tbf %s, netem %s (without it: --dut relay for delay), nftables %s\n", yes(f.Tbf), yes(f.Netem), yes(f.Nftables))
	}
	x, err := trials.ProbeXDP()
	if err != nil {
		fmt.Fprintf(stdout, "xdp         cannot load its program: %v\n", err)
		return nil
	}
	for _, k := range []string{"metadata", "head", "user"} {
		if why, ok := x.Refused[k]; ok {
			fmt.Fprintf(stdout, "xdp stamp   %-9s refused: %s\n", k, why)
		} else {
			fmt.Fprintf(stdout, "xdp stamp   %-9s loads\n", k)
		}
	}
	if x.Stamp == "" {
		fmt.Fprintln(stdout, "xdp         no receive stamp loads: use --transport raw")
	} else {
		fmt.Fprintf(stdout, "xdp         --transport xdp stamps receive times with %q\n", x.Stamp)
	}
	return nil
}

func kernelName() string {
	_, k := rig.HostAndKernel()
	return k
}
