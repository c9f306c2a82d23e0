// Package fileio reads input files within a bound: a results file, a
// journal, a plan or a calibration table is a regular file of a known
// largest size, and anything else (a FIFO, /dev/zero, a folder, a file of
// gigabytes) is an error before it is read.
package fileio

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// OpenBounded opens path for reading, refusing anything but a regular file
// (a FIFO would block the open, /dev/zero never end) and files over limit
// bytes. The returned reader also stops at limit+1 bytes, in case the file
// grows. Errors do not name the file: callers add it, and the flag.
func OpenBounded(path string, limit int64) (*os.File, io.Reader, error) {
	// O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("not a regular file but %s; give a file", fileKind(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, nil, fmt.Errorf("%d bytes, more than the %s this program reads from such a file; is it the right file?", st.Size(), byteSize(limit))
	}
	return f, io.LimitReader(f, limit+1), nil
}

// ReadBounded reads a whole regular file of at most limit bytes.
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, r, err := OpenBounded(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than the %s this program reads from such a file; is it the right file?", byteSize(limit))
	}
	return b, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
