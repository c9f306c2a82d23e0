//go:build !unix

package rig

import (
	"errors"
	"os"
)

// Lock is a no-op here: this system has no flock, so two runs of one output
// folder are not detected (unix systems refuse the second).
type Lock struct{}

// LockFolder checks that dir is a folder.
func LockFolder(flagName, dir string) (*Lock, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, inputf("%s %s: no such folder", flagName, dir)
		}
		return nil, err
	}
	return &Lock{}, nil
}

// Unlock does nothing.
func (l *Lock) Unlock() {}
