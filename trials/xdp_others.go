//go:build !linux

package trials

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// XDPEngine is the xdp transport; it exists only on Linux.
type XDPEngine struct{}

var errXDPNotSupported = fmt.Errorf("the xdp transport (AF_XDP) is %w on %s: use --transport raw on Linux", ErrNotSupported, runtime.GOOS)

// OpenXDP returns an error: AF_XDP is Linux-only.
func OpenXDP(ctx context.Context, cfg Config) (*XDPEngine, error) { return nil, errXDPNotSupported }

// Run returns an error: AF_XDP is Linux-only.
func (e *XDPEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	return Result{Spec: spec}, errXDPNotSupported
}

// Paths returns the zero Paths.
func (e *XDPEngine) Paths() Paths { return Paths{} }

// Close does nothing.
func (e *XDPEngine) Close() error { return nil }

// GenerateXDP returns an error: AF_XDP is Linux-only.
func GenerateXDP(ctx context.Context, c GenConfig) (GenResult, error) {
	return GenResult{}, errXDPNotSupported
}

// CalibrateXDP returns an error: AF_XDP is Linux-only.
func CalibrateXDP(ctx context.Context, cfg Config, sizes []int, d time.Duration) ([]CalibrationPoint, error) {
	return nil, errXDPNotSupported
}
