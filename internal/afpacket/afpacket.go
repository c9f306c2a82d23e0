// Package afpacket is a small AF_PACKET layer for the traffic engine: raw
// sockets bound to one interface, TPACKET_V2 transmit and receive rings,
// PACKET_QDISC_BYPASS, classic BPF filters and PACKET_STATISTICS. It is
// modelled on mdlayher/packet but exposes the rings, which the engine's hot
// path needs and mdlayher/packet does not offer.
//
// Ring slots are shared with the kernel: a slot's status word is read and
// written atomically, everything else only while the slot is owned by user
// space (see Ring).
package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rfc2544/rfc2544/internal/notsupported"
)

// ErrNotSupported is returned on systems without AF_PACKET; it wraps
// notsupported.Err (trials.ErrNotSupported).
var ErrNotSupported = fmt.Errorf("AF_PACKET sockets are %w on this system", notsupported.Err)

// Stats is what PACKET_STATISTICS reports: frames the socket received (after
// its filter) and frames it dropped because its buffer or ring was full.
// The kernel resets both on every read, so callers accumulate.
type Stats struct {
	Packets uint64
	Drops   uint64
}

// Add returns s plus o.
func (s Stats) Add(o Stats) Stats {
	return Stats{Packets: s.Packets + o.Packets, Drops: s.Drops + o.Drops}
}

// ParseStats decodes a struct tpacket_stats (two native-endian uint32:
// tp_packets, tp_drops) as returned by getsockopt(PACKET_STATISTICS).
// tp_packets counts drops too; Packets is the frames actually queued.
func ParseStats(b []byte) (Stats, error) {
	if len(b) < 8 {
		return Stats{}, errors.New("parse packet statistics: short buffer")
	}
	p := binary.NativeEndian.Uint32(b[0:4])
	d := binary.NativeEndian.Uint32(b[4:8])
	if d > p {
		p = d
	}
	return Stats{Packets: uint64(p - d), Drops: uint64(d)}, nil
}
