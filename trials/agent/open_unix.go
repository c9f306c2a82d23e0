//go:build unix

package agent

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without blocking: opening a FIFO
// with no writer returns at once instead of waiting for one.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
