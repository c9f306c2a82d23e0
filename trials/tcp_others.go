//go:build !linux

package trials

import (
	"context"
	"errors"
)

var errTCPNotSupported = errors.New("the tcp test needs Linux (TCP_INFO, network namespaces)")

// MeasureRTT returns an error: the TCP test is Linux-only.
func MeasureRTT(context.Context, TCPConfig, int) (RTTProbe, error) {
	return RTTProbe{}, errTCPNotSupported
}

// RunTCP returns an error: the TCP test is Linux-only.
func RunTCP(context.Context, TCPConfig) (TCPRun, error) { return TCPRun{}, errTCPNotSupported }
