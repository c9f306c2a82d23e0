package trials

import (
	"errors"
	"testing"

	"github.com/rfc2544/rfc2544/internal/afpacket"
	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// TestErrNotSupportedIsOne: the internal packages' "not supported" errors
// match ErrNotSupported, so a caller tests for one sentinel.
func TestErrNotSupportedIsOne(t *testing.T) {
	for name, err := range map[string]error{"afpacket": afpacket.ErrNotSupported, "nsutil": nsutil.ErrNotSupported} {
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("%s: %v does not match ErrNotSupported", name, err)
		}
	}
}
