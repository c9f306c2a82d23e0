package main

import (
	"context"
	"fmt"
	"os"

	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// engine is the raw traffic engine as the run uses it.
type engine interface {
	rfc2544.Tester
	Close() error
}

// openEngine opens the raw engine (trials.Open): both ports, their
// receivers, and ARP resolution of the DUT on each side.
var openEngine = func(ctx context.Context, cfg trials.Config) (engine, error) {
	e, err := trials.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, w := range e.PauseWarnings() {
		fmt.Fprintln(os.Stderr, "rfc2544: warning:", w)
	}
	return e, nil
}

// openUDPEngine opens the UDP transport (trials.OpenUDP): receive sockets
// on both sides.
var openUDPEngine = func(ctx context.Context, cfg trials.UDPConfig) (engine, error) {
	e, err := trials.OpenUDP(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// openXDPEngine opens the xdp transport (trials.OpenXDP): an AF_XDP socket
// on each port; when AF_XDP cannot run its error says what is missing and
// suggests --transport raw.
var openXDPEngine = func(ctx context.Context, cfg trials.Config) (xdpEngine, error) {
	e, err := trials.OpenXDP(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// xdpEngine is the xdp transport as the run uses it.
type xdpEngine interface {
	engine
	Paths() trials.Paths
}
