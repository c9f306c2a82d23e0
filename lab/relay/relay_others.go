//go:build !linux

package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
)

var errOS = fmt.Errorf("the relay DUT needs Linux, not %s: %w", runtime.GOOS, errors.ErrUnsupported)

// Main needs Linux; elsewhere it prints why and returns 1.
func Main(name, specJSON string) int {
	fmt.Println("relay:", errOS)
	return 1
}

// Start needs Linux.
func Start(name string, spec Spec, logPath, pidPath string) (pid int, start uint64, err error) {
	return 0, 0, errOS
}

// Calibrate needs Linux.
func Calibrate(ctx context.Context, socket, ns, ifname string, src, dst net.HardwareAddr, sip netip.Addr) (float64, bool, error) {
	return 0, false, errOS
}

// End needs Linux.
func End(pid int, name string, start uint64) error { return errOS }
