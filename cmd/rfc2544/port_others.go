//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// inspectPort needs Linux (netlink, network namespaces).
func inspectPort(p portConfig) (portInfo, error) {
	return portInfo{}, fmt.Errorf("port %s: the raw transport needs Linux, not %s; use --transport sim to try the tool", p.name, runtime.GOOS)
}
