//go:build !linux

package trials

import "context"

// RemoteEngine runs two-host trials (Linux only).
type RemoteEngine struct{}

// NewRemote needs Linux.
func NewRemote(RemoteConfig, Remote) (*RemoteEngine, error) { return nil, errUDPHalf }

// Run needs Linux.
func (e *RemoteEngine) Run(_ context.Context, spec Spec) (Result, error) {
	return Result{Spec: spec}, errUDPHalf
}
