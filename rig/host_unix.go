//go:build unix

package rig

import (
	"os"

	"golang.org/x/sys/unix"
)

// HostAndKernel names the tester's host and kernel for the results.
func HostAndKernel() (host, kernel string) {
	host, _ = os.Hostname()
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	return host, kernel
}
