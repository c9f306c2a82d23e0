// Package nsutil runs code inside a named network namespace on a locked OS
// thread. Sockets opened inside stay in that namespace after Do returns, so a
// port can be opened in a namespace and used from any goroutine.
package nsutil

import (
	"fmt"

	"github.com/rfc2544/rfc2544/internal/notsupported"
)

// ErrNotSupported is returned on systems without network namespaces; it
// wraps notsupported.Err (trials.ErrNotSupported).
var ErrNotSupported = fmt.Errorf("network namespaces are %w on this system", notsupported.Err)
