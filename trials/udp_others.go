//go:build !linux

package trials

import (
	"context"
	"errors"
)

// UDPEngine is the UDP transport; it is implemented on Linux only.
type UDPEngine struct{}

// OpenUDP reports that the UDP transport needs Linux.
func OpenUDP(ctx context.Context, cfg UDPConfig) (*UDPEngine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, errors.New("the udp transport (recvmmsg, SO_TIMESTAMPNS, SO_RXQ_OVFL) needs Linux")
}

// Run is not available off Linux.
func (e *UDPEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	return Result{Spec: spec}, errors.New("the udp transport needs Linux")
}

// Paths reports the UDP transport's paths.
func (e *UDPEngine) Paths() Paths { return Paths{Transport: "udp"} }

// Close does nothing.
func (e *UDPEngine) Close() error { return nil }
