// Package labtest builds throw-away labs for integration tests of packages
// that send traffic through the virtual lab.
package labtest

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
)

// Name returns a lab name unique to the test and the process: "t", the
// process ID and a hash of t.Name(), within the lab's 24-character limit.
func Name(tb testing.TB) string {
	h := fnv.New32a()
	h.Write([]byte(tb.Name()))
	return fmt.Sprintf("t%d-%08x", os.Getpid(), h.Sum32())
}

// New builds a lab from cfg (its Name is replaced by Name(tb)) and removes
// it when the test ends. Without root it skips the test with the reason; any
// other failure fails the test. A relay DUT runs as a copy of the test
// binary (package lab's init recognises it), so tests need nothing else.
func New(tb testing.TB, cfg lab.Config) *lab.State {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("labtest: building a lab needs root (network namespaces); run the tests as root")
	}
	cfg.Name = Name(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := lab.Up(ctx, cfg)
	if err != nil {
		tb.Fatalf("lab up %s: %v", cfg.Name, err)
	}
	tb.Cleanup(func() {
		if err := lab.Down(cfg.Name); err != nil {
			tb.Errorf("lab down %s: %v", cfg.Name, err)
		}
	})
	return st
}
