//go:build !linux

package trials

import (
	"context"
	"fmt"
	"runtime"
)

var errUDPHalf = fmt.Errorf("the two-host UDP transport needs Linux: %w on %s", ErrNotSupported, runtime.GOOS)

// udpReceive is one running receive half (Linux only).
type udpReceive struct{}

// startUDPReceive needs Linux.
func startUDPReceive(RemotePort, Spec, uint8, []Stream, RemoteReceive) (*udpReceive, error) {
	return nil, errUDPHalf
}

// Port is the UDP port the socket is bound to.
func (u *udpReceive) Port() uint16 { return 0 }

// Stop stops receiving.
func (u *udpReceive) Stop(map[uint16]uint64) (udpReceiveResult, error) {
	return udpReceiveResult{}, errUDPHalf
}

// udpSend is one running send half (Linux only).
type udpSend struct{}

// startUDPSend needs Linux.
func startUDPSend(context.Context, RemotePort, Spec, uint8, []Stream, RemoteSend) (*udpSend, error) {
	return nil, errUDPHalf
}

// Stop stops sending.
func (u *udpSend) Stop() (udpSendResult, error) { return udpSendResult{}, errUDPHalf }
