//go:build !linux

package trials

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// errNotSupported is returned by the raw transport off Linux.
var errNotSupported = fmt.Errorf("the raw transport (AF_PACKET) is %w on %s", ErrNotSupported, runtime.GOOS)

// Engine is the raw-transport traffic engine; it exists only on Linux.
type Engine struct{}

// Open returns an error: AF_PACKET is Linux-only.
func Open(ctx context.Context, cfg Config) (*Engine, error) { return nil, errNotSupported }

// Run returns an error: AF_PACKET is Linux-only.
func (e *Engine) Run(ctx context.Context, spec Spec) (Result, error) {
	return Result{Spec: spec}, errNotSupported
}

// Paths returns the zero Paths.
func (e *Engine) Paths() Paths { return Paths{} }

// DUTMAC returns "".
func (e *Engine) DUTMAC(side int) string { return "" }

// ARPAnswered returns zeros.
func (e *Engine) ARPAnswered() (a, b uint64) { return 0, 0 }

// Close does nothing.
func (e *Engine) Close() error { return nil }

// Generate returns an error: AF_PACKET is Linux-only.
func Generate(ctx context.Context, c GenConfig) (GenResult, error) {
	return GenResult{}, errNotSupported
}

// Calibrate returns an error: AF_PACKET is Linux-only.
func Calibrate(ctx context.Context, cfg Config, sizes []int, d time.Duration) ([]CalibrationPoint, error) {
	return nil, errNotSupported
}
