//go:build !linux

package trials

import (
	"context"
	"fmt"
	"runtime"
)

// UDPEngine is the UDP transport; it is implemented on Linux only.
type UDPEngine struct{}

// OpenUDP reports that the UDP transport needs Linux.
func OpenUDP(ctx context.Context, cfg UDPConfig) (*UDPEngine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the udp transport (recvmmsg, SO_TIMESTAMPNS, SO_RXQ_OVFL) needs Linux: %w on %s", ErrNotSupported, runtime.GOOS)
}

// Run is not available off Linux.
func (e *UDPEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	return Result{Spec: spec}, fmt.Errorf("the udp transport needs Linux: %w on %s", ErrNotSupported, runtime.GOOS)
}

// Paths reports the UDP transport's paths.
func (e *UDPEngine) Paths() Paths { return Paths{Transport: "udp"} }

// Close does nothing.
func (e *UDPEngine) Close() error { return nil }
