//go:build !linux

package nsutil

// Do runs fn when name is empty; namespaces exist only on Linux.
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	return ErrNotSupported
}
