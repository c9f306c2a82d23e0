package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/rfc2544/rfc2544/internal/version"
)

func printVersion(w io.Writer, args []string) error {
	if len(args) > 0 {
		return usagef("version takes no arguments, got %q", args[0])
	}
	_, err := fmt.Fprintln(w, version.Describe(debug.ReadBuildInfo()))
	return err
}
