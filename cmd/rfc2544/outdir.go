package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/internal/quote"
	"github.com/rfc2544/rfc2544/rig"
)

// This file holds what the verbs share about files: the output folder's
// lock, the one atomic writer, and bounded reads of input files.

// journalName is the journal's file name in the output folder.
const journalName = rig.JournalName

// runFiles are the files a run writes into its folder; --overwrite removes
// them, and a folder holding anything else is not a run's to take.
var runFiles = rig.RunFiles

// checkOutFree refuses an --out that exists and is not empty, unless
// overwrite: a run never mixes into, or silently replaces, another's files.
func checkOutFree(dir string, overwrite bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usagef("--out %s: %v", dir, err)
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, journalName)); err == nil {
		if overwrite {
			return nil
		}
		return usagef("--out %s: already holds a run (%s); continue it with --resume %s, replace it with --overwrite, or choose another --out", dir, journalName, dir)
	}
	if overwrite {
		return nil
	}
	return usagef("--out %s: exists and is not empty (%s ...); choose a new or empty folder, or pass --overwrite to replace the run files in it", dir, ents[0].Name())
}

// clearRunFiles removes the files of an earlier run from dir (--overwrite).
func clearRunFiles(dir string) error {
	for _, n := range runFiles {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--overwrite: remove %s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

// outputFile is one file of an atomic write.
type outputFile = fileio.File

// writeFilesAtomic writes files into dir, all or none (fileio.WriteFiles);
// a signal that ends the process at once removes the temporary files.
func writeFilesAtomic(dir string, files []outputFile) error {
	return fileio.WriteFiles(dir, files, onExit)
}

// Input size limits.
const (
	// maxPlanBytes bounds a plan file: real plans are a few kilobytes.
	maxPlanBytes = 1 << 20
	// maxJournalBytes bounds a journal read back by --resume, and
	// maxCalibrationBytes a --calibration file.
	maxCalibrationBytes = 1 << 20
)

// maxQuote is how much of a bad value an error message quotes.
const maxQuote = quote.Max

// quoteShort quotes a bad value, cut to about maxQuote bytes (quote.Short).
func quoteShort(s string) string { return quote.Short(s) }

// writeReportFile writes one file atomically (writeFilesAtomic), e.g. a
// chart named by a flag.
func writeReportFile(path string, write func(io.Writer) error) error {
	return writeFilesAtomic(filepath.Dir(path), []outputFile{{Name: filepath.Base(path), Write: write}})
}
