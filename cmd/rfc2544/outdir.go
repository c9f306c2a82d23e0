package main

import (
	"io"
	"path/filepath"

	"github.com/rfc2544/rfc2544/internal/atexit"
	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/internal/quote"
	"github.com/rfc2544/rfc2544/rig"
)

// This file holds what the verbs share about files: the output folder's
// lock, the one atomic writer, and bounded reads of input files.

// journalName is the journal's file name in the output folder.
const journalName = rig.JournalName

// outputFile is one file of an atomic write.
type outputFile = fileio.File

// writeFilesAtomic writes files into dir, all or none (fileio.WriteFiles);
// a signal that ends the process at once removes the temporary files.
func writeFilesAtomic(dir string, files []outputFile) error {
	return fileio.WriteFiles(dir, files, atexit.Register)
}

// maxQuote is how much of a bad value an error message quotes.
const maxQuote = quote.Max

// quoteShort quotes a bad value, cut to about maxQuote bytes (quote.Short).
func quoteShort(s string) string { return quote.Short(s) }

// writeReportFile writes one file atomically (writeFilesAtomic), e.g. a
// chart named by a flag.
func writeReportFile(path string, write func(io.Writer) error) error {
	return writeFilesAtomic(filepath.Dir(path), []outputFile{{Name: filepath.Base(path), Write: write}})
}
