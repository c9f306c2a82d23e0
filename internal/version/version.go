// Package version describes this module's binary from its build
// information: the long line 'rfc2544 version' prints (Describe) and the
// short tool name a run records in its journal and results (Tool).
package version

import (
	"runtime/debug"
	"strings"
)

// Describe describes the binary from its build information: the module
// version ("(devel)" for a build from a checkout), the VCS revision and
// time with "+dirty" for uncommitted changes, and the Go version.
func Describe(bi *debug.BuildInfo, ok bool) string {
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

// Tool is "rfc2544" plus the module version or VCS revision of the running
// binary (ToolOf).
func Tool() string { return ToolOf(debug.ReadBuildInfo()) }

// ToolOf is "rfc2544" plus the module version, or the VCS revision when
// the build has one (12 hex digits), of the build information bi.
func ToolOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "rfc2544"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v = s.Value[:12]
		}
	}
	if v == "" || v == "(devel)" {
		return "rfc2544 (devel)"
	}
	return "rfc2544 " + v
}
