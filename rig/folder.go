package rig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CheckOutFree refuses an output folder (--out) that exists and is not
// empty, unless overwrite and it holds a run: a run never mixes into, or
// silently replaces, another's files.
func CheckOutFree(dir string, overwrite bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return inputf("--out %s: %v", dir, err)
	}
	if len(ents) == 0 || overwrite {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, JournalName)); err == nil {
		return inputf("--out %s: already holds a run (%s); continue it with --resume %s, replace it with --overwrite, or choose another --out", dir, JournalName, dir)
	}
	return inputf("--out %s: exists and is not empty (%s ...); choose a new or empty folder, or pass --overwrite to replace the run files in it", dir, ents[0].Name())
}

// ClearRunFiles removes the files of an earlier run (RunFiles) from dir
// (--overwrite).
func ClearRunFiles(dir string) error {
	for _, n := range RunFiles {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--overwrite: remove %s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}
