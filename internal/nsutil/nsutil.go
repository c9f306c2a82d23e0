// Package nsutil runs code inside a named network namespace on a locked OS
// thread. Sockets opened inside stay in that namespace after Do returns, so a
// port can be opened in a namespace and used from any goroutine.
package nsutil

import "errors"

// ErrNotSupported is returned on systems without network namespaces.
var ErrNotSupported = errors.New("network namespaces are not supported on this system")
