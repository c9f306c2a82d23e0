//go:build !linux

package netdev

import (
	"errors"
	"fmt"
	"runtime"
)

var errNotLinux = fmt.Errorf("network interfaces through netlink and ethtool: %w on %s (Linux only)", errors.ErrUnsupported, runtime.GOOS)

// Inspect needs Linux; elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func Inspect(ns, ifname string) (Info, error) { return Info{}, errNotLinux }

// DisableOffloads needs Linux; elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func DisableOffloads(ns, ifname string) error { return errNotLinux }

// Ethtool needs Linux; elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func Ethtool(ns, ifname string, fn func(do func(cmd []byte) error) error) error { return errNotLinux }
