//go:build linux

package afxdp

import (
	"encoding/binary"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

type rxState struct {
	pending      []uint64 // chunks handed to the caller by the last Receive
	npend        int
	rxFrames     uint64
	rxUserStamps uint64
}

// initRx gives every receive chunk to the kernel on the fill ring.
func (s *Socket) initRx() {
	s.pending = make([]uint64, s.cfg.RingSize)
	base := s.txChunks * s.cfg.ChunkSize
	for i := range s.rxChunks {
		s.pending[i] = uint64(base + i*s.cfg.ChunkSize)
	}
	s.npend = s.rxChunks
	s.refill()
}

// refill returns the pending chunks to the kernel. The fill ring holds every
// receive chunk (rxChunks ≤ RingSize), so there is always room.
func (s *Socket) refill() {
	if s.npend == 0 {
		return
	}
	k := s.fill.free(uint32(s.npend))
	idx := s.fill.cachedProd
	for i := range k {
		s.fill.addrs[(idx+i)&s.fill.mask] = s.pending[i]
	}
	s.fill.submit(k)
	copy(s.pending, s.pending[k:s.npend])
	s.npend -= int(k)
}

// Receive returns up to len(frames) received test frames with their receive
// times, waiting up to timeout for the first (0: no wait). The frames' Data
// point into the UMEM and stay valid until the next Receive call, which
// hands their chunks back to the kernel. It does not allocate.
func (s *Socket) Receive(frames []Frame, timeout time.Duration) (int, error) {
	if s.rx == nil {
		return 0, errors.New("afxdp: receive: the socket was opened without RX")
	}
	s.refill()
	n := s.rx.avail(uint32(len(frames)))
	if n == 0 && (timeout > 0 || s.fill.needWakeup()) {
		ms := int(timeout.Milliseconds())
		if timeout > 0 && ms == 0 {
			ms = 1
		}
		fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds[:], ms); err != nil && !errors.Is(err, unix.EINTR) {
			return 0, os.NewSyscallError("poll", err)
		}
		n = s.rx.avail(uint32(len(frames)))
	}
	if n == 0 {
		return 0, nil
	}
	idx := s.rx.cachedCons
	var userNs int64
	chunk := uint64(s.cfg.ChunkSize)
	out := 0
	for i := range n {
		d := s.rx.descs[(idx+i)&s.rx.mask]
		end := d.Addr + uint64(d.Len)
		if d.Addr < MetaLen || end > uint64(len(s.umem)) || d.Addr/chunk != (end-1)/chunk {
			continue // a descriptor outside the UMEM: the kernel never does this
		}
		s.pending[s.npend] = d.Addr &^ (chunk - 1)
		s.npend++
		start, ts := d.Addr, int64(0)
		if s.stamp == StampMeta || s.stamp == StampHead {
			// The stamp is in the metadata in front of the frame, or at
			// the frame's head; there, when the program could not
			// prepend it, bytes 12..15 are the EtherType and more,
			// never 0.
			meta := s.umem[d.Addr-MetaLen : d.Addr]
			if s.stamp == StampHead {
				meta = s.umem[d.Addr:min(d.Addr+MetaLen, end)]
			}
			if len(meta) == MetaLen && binary.NativeEndian.Uint32(meta[8:]) == metaMagic && binary.NativeEndian.Uint32(meta[12:]) == 0 {
				ts = int64(binary.NativeEndian.Uint64(meta)) + s.monoToReal
				binary.NativeEndian.PutUint32(meta[8:], 0) // a later frame without a stamp must not reuse it
				if s.stamp == StampHead {
					start += MetaLen
				}
			}
		}
		if ts == 0 {
			if userNs == 0 {
				userNs = time.Now().UnixNano()
			}
			ts = userNs
			s.rxUserStamps++
		}
		frames[out] = Frame{Data: s.umem[start:end:end], RxNs: ts}
		out++
	}
	s.rx.release(n)
	s.rxFrames += uint64(out)
	return out, nil
}
