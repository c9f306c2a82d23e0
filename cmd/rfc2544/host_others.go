//go:build !unix

package main

import (
	"errors"
	"os"
)

// outLock is a no-op here: this system has no flock, so two runs of one
// output folder are not detected (unix systems refuse the second).
type outLock struct{}

// lockOut checks that dir is a folder.
func lockOut(flagName, dir string) (*outLock, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usagef("%s %s: no such folder", flagName, dir)
		}
		return nil, err
	}
	return &outLock{}, nil
}

func (l *outLock) unlock() {}
