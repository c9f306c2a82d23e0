//go:build !linux

package agent

import "net"

// outOfOrder: only Linux says how many segments wait out of order; off it
// a silent peer is lost after the peer timeout, as on any connection.
func outOfOrder(net.Conn) (uint32, bool) { return 0, false }
