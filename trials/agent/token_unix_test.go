//go:build unix

package agent

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadTokenNotRegular (issue 17 item 5): a token file naming a FIFO
// (with no writer: opening it used to block forever), a device or a
// directory is refused at once with an error that says what it is.
func TestLoadTokenNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "agent.token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "a device, not a regular file"},
		{t.TempDir(), "a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := LoadToken(tc.path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("LoadToken(%s): error %v, want one naming the file and saying %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("LoadToken(%s) still blocked after 5 s", tc.path)
		}
	}
}
