// Package fileio reads input files within a bound (a results file, a
// journal, a plan or a calibration table is a regular file of a known
// largest size, and anything else, a FIFO, /dev/zero, a folder, a file of
// gigabytes, is an error before it is read) and writes output files
// atomically.
package fileio

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
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

// File is one file of WriteFiles: a name in the folder and what writes
// its contents.
type File struct {
	Name  string
	Write func(io.Writer) error
}

// WriteFiles writes every file into dir under a temporary name, mode 0644
// (results, reports and the lab's state are for sharing), synced; only when
// all are written are they renamed into place. A failure leaves the files
// already in dir as they were. track, when not nil, is given a function
// that removes the temporary files written so far (for a signal handler
// that exits at once) and returns the function to call when it is no
// longer needed.
func WriteFiles(dir string, files []File, track func(cleanup func()) (done func())) error {
	var mu sync.Mutex // tmps is also read by the exit hook
	tmps := make([]string, 0, len(files))
	cleanup := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, t := range tmps {
			os.Remove(t)
		}
		tmps = nil
	}
	if track != nil {
		defer track(cleanup)()
	}
	for _, o := range files {
		path := filepath.Join(dir, o.Name)
		tmp, err := os.CreateTemp(dir, "."+o.Name+".*")
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", path, err)
		}
		mu.Lock()
		tmps = append(tmps, tmp.Name())
		mu.Unlock()
		err = o.Write(tmp)
		if err == nil {
			err = tmp.Chmod(0o644) // CreateTemp makes 0600; results are for sharing
		}
		if err == nil {
			err = tmp.Sync()
		}
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, o := range files {
		if err := os.Rename(tmps[i], filepath.Join(dir, o.Name)); err != nil {
			for _, t := range tmps[i:] {
				os.Remove(t)
			}
			tmps = nil
			return fmt.Errorf("write %s: %w", filepath.Join(dir, o.Name), err)
		}
	}
	tmps = nil // renamed: nothing for the exit hook to remove
	return nil
}
