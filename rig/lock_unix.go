//go:build unix

package rig

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock is an exclusive flock on an output folder, held by a run or a resume
// from before it reads the journal until it exits. The kernel drops it when
// the process ends, however it ends.
type Lock struct{ f *os.File }

// LockFolder takes the lock on dir without waiting: another run or resume
// of the same folder is an error at once, never two writers of one
// journal. flagName names the folder's flag in errors (--out, --resume).
func LockFolder(flagName, dir string) (*Lock, error) {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, inputf("%s %s: no such folder", flagName, dir)
		}
		return nil, fmt.Errorf("%s %s: open folder to lock it: %w", flagName, dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, inputf("%s %s: in use by another rfc2544 run or resume of this folder; wait for it to end (or stop it), then try again", flagName, dir)
		}
		return nil, fmt.Errorf("%s %s: lock folder: %w", flagName, dir, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	if l != nil {
		l.f.Close() // closing the last descriptor releases the flock
	}
}
