//go:build !linux

package lab

import (
	"context"
	"fmt"
	"runtime"
)

func errOS() error {
	return fmt.Errorf("the virtual lab needs Linux network namespaces, not %s: %w", runtime.GOOS, ErrNotSupported)
}

func up(context.Context, Config) (*State, error) { return nil, errOS() }

func down(string) error { return errOS() }

func (s *State) dutCounters() (DUTCounters, error) { return DUTCounters{}, errOS() }

func startRelay(context.Context, *State) error { return errOS() }

func probeFeatures() (Features, error) { return Features{}, errOS() }
