package lab

import (
	"context"
	"errors"
)

func startRelay(ctx context.Context, st *State) error {
	return errors.New("relay DUT: not implemented yet")
}

func stopRelay(name string, st *State) error { return nil }
