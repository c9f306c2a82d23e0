//go:build !unix

package rig

import (
	"os"
	"runtime"
)

// HostAndKernel names the tester's host and its operating system.
func HostAndKernel() (host, kernel string) {
	host, _ = os.Hostname()
	return host, runtime.GOOS
}
