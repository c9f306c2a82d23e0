//go:build !linux

package trials

import (
	"context"
	"fmt"
	"runtime"
)

var errUDPHalf = fmt.Errorf("the two-host UDP transport needs Linux: %w on %s", ErrNotSupported, runtime.GOOS)

// UDPReceive is one running receive half (Linux only).
type UDPReceive struct{}

// StartUDPReceive needs Linux.
func StartUDPReceive(UDPHalfConfig, Spec, uint8, []Stream, UDPReceiveOptions) (*UDPReceive, error) {
	return nil, errUDPHalf
}

// Port is the UDP port the socket is bound to.
func (u *UDPReceive) Port() uint16 { return 0 }

// Stop stops receiving.
func (u *UDPReceive) Stop(map[uint16]uint64) (UDPReceiveResult, error) {
	return UDPReceiveResult{}, errUDPHalf
}

// UDPSend is one running send half (Linux only).
type UDPSend struct{}

// StartUDPSend needs Linux.
func StartUDPSend(context.Context, UDPHalfConfig, Spec, uint8, []Stream, UDPSendOptions) (*UDPSend, error) {
	return nil, errUDPHalf
}

// Done is closed when the sender has stopped.
func (u *UDPSend) Done() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// Stop stops sending.
func (u *UDPSend) Stop() (UDPSendResult, error) { return UDPSendResult{}, errUDPHalf }
