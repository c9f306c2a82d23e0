package main

import (
	"flag"
	"fmt"
	"io"
)

// Every verb prints its help the same way, to stdout: what it does, then
// its flags as --name VALUE and their use (printFlag).

// printFlags writes every flag of fs, in name order.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags:")
	fs.VisitAll(func(fl *flag.Flag) { printFlag(w, fl, "") })
}

// printFlag writes one flag as "  --name VALUE   usage (default D)"; value,
// when set, replaces the placeholder of the usage text.
func printFlag(w io.Writer, fl *flag.Flag, value string) {
	name, usage := flag.UnquoteUsage(fl)
	if value != "" {
		name = value
	}
	head := "  --" + fl.Name
	if name != "" {
		head += " " + name
	}
	if fl.DefValue != "" && fl.DefValue != "false" && fl.DefValue != "0" && fl.DefValue != "0s" {
		usage += fmt.Sprintf(" (default %s)", fl.DefValue)
	}
	if len(head) <= 26 {
		fmt.Fprintf(w, "%-26s %s\n", head, usage)
	} else {
		fmt.Fprintf(w, "%s\n%26s %s\n", head, "", usage)
	}
}

// helpOn makes fs print help text and its flags to w on -h or --help, and
// nothing on a parse error (the verb returns the error, with exit code 2).
func helpOn(fs *flag.FlagSet, w io.Writer, help string) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(w, help)
		printFlags(w, fs)
	}
}
