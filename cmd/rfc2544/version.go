package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// buildVersion describes the binary from its build information: the module
// version ("(devel)" for a build from a checkout), the VCS revision and
// time with "+dirty" for uncommitted changes, and the Go version.
func buildVersion(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "rfc2544 (no build information)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := []string{"rfc2544 " + v}
	if rev != "" {
		r := rev
		if len(r) > 12 {
			r = r[:12]
		}
		c := "commit " + r + dirty
		if when != "" {
			c += " (" + when + ")"
		}
		out = append(out, c)
	} else {
		out = append(out, "no VCS revision (built outside a checkout, with go run or with -buildvcs=false)")
	}
	return strings.Join(append(out, bi.GoVersion), ", ")
}

func printVersion(w io.Writer, args []string) error {
	if len(args) > 0 {
		return usagef("version takes no arguments, got %q", args[0])
	}
	bi, ok := debug.ReadBuildInfo()
	_, err := fmt.Fprintln(w, buildVersion(bi, ok))
	return err
}
