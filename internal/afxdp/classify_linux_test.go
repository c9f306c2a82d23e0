//go:build linux

package afxdp

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestClassify checks that each system-call failure names what is missing
// and keeps the errno and permission tests working.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		errno        unix.Errno
		want         string
		notSupported bool
		permission   bool
	}{
		{unix.EAFNOSUPPORT, "the kernel has no AF_XDP", true, false},
		{unix.EPERM, "CAP_NET_RAW", true, true},
		{unix.EOPNOTSUPP, "the driver", true, false},
		{unix.EINVAL, "afxdp: bind", false, false},
	} {
		err := classify("bind", tt.errno)
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %q does not say %q", tt.errno, err, tt.want)
		}
		if errors.Is(err, ErrNotSupported) != tt.notSupported || errors.Is(err, os.ErrPermission) != tt.permission {
			t.Errorf("%v: %q: ErrNotSupported %v, ErrPermission %v; want %v, %v", tt.errno, err,
				errors.Is(err, ErrNotSupported), errors.Is(err, os.ErrPermission), tt.notSupported, tt.permission)
		}
		if !errors.Is(err, tt.errno) {
			t.Errorf("%v: %q lost the errno", tt.errno, err)
		}
		if tt.notSupported && !strings.Contains(err.Error(), "raw transport") {
			t.Errorf("%v: %q does not suggest the raw transport", tt.errno, err)
		}
	}
}
