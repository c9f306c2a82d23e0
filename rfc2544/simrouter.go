package rfc2544

import (
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// The simulated router of NewSimRouter.
const (
	simRouterCapacityShare = 0.8
	simRouterBufferBytes   = 256 << 10
	simRouterLatency       = 20 * time.Microsecond
	simRouterJitter        = 5 * time.Microsecond
	simRouterMTU           = 1500
)

// NewSimRouter is a simulated DUT to try the procedures on: a router on
// ports of linkBps that forwards capacityBps per direction (zero:
// 80 % of linkBps) with a 256 KiB buffer, 20 µs of
// latency plus up to 5 µs of jitter, on a path of IP MTU mtu bytes (zero:
// 1500). Its draws are repeatable (Seed 1).
func NewSimRouter(linkBps, capacityBps float64, mtu int) *SimDUT {
	if capacityBps == 0 {
		capacityBps = linkBps * simRouterCapacityShare
	}
	if mtu == 0 {
		mtu = simRouterMTU
	}
	return &SimDUT{
		LinkBps:      linkBps,
		CapacityBps:  capacityBps,
		BufferBytes:  simRouterBufferBytes,
		BaseLatency:  simRouterLatency,
		Jitter:       simRouterJitter,
		Seed:         1,
		MaxFrameSize: mtu + framing.EthHeaderLen + framing.FCSLen,
	}
}
