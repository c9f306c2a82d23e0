//go:build linux

package afxdp

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is the shared part of an AF_XDP ring: a producer and a consumer
// index (free-running uint32, masked to index the entries) and a flags word,
// all in memory the kernel shares. The side that produces writes entries,
// then publishes them with an atomic store of the producer index (release);
// the side that consumes loads the producer index atomically (acquire) before
// reading entries, and hands them back with an atomic store of the consumer
// index. Go's sync/atomic operations are sequentially consistent, which
// covers both orderings; the cached copies save a shared-memory load per call.
type ring struct {
	prod, cons, flags *uint32
	size, mask        uint32
	cachedProd        uint32
	cachedCons        uint32
	mem               []byte // the mmapped region, for Munmap; nil for a test ring
}

// free returns how many entries a producer may write now, at most n,
// reloading the consumer index only when the cached one shows too few.
func (r *ring) free(n uint32) uint32 {
	f := r.size - (r.cachedProd - r.cachedCons)
	if f >= n {
		return n
	}
	r.cachedCons = atomic.LoadUint32(r.cons)
	f = r.size - (r.cachedProd - r.cachedCons)
	return min(f, n)
}

// submit publishes n entries written after cachedProd.
func (r *ring) submit(n uint32) {
	r.cachedProd += n
	atomic.StoreUint32(r.prod, r.cachedProd)
}

// avail returns how many entries a consumer may read now, at most n.
func (r *ring) avail(n uint32) uint32 {
	a := r.cachedProd - r.cachedCons
	if a == 0 {
		r.cachedProd = atomic.LoadUint32(r.prod)
		a = r.cachedProd - r.cachedCons
	}
	return min(a, n)
}

// release hands n read entries back to the producer.
func (r *ring) release(n uint32) {
	r.cachedCons += n
	atomic.StoreUint32(r.cons, r.cachedCons)
}

// needWakeup reports whether the kernel set XDP_RING_NEED_WAKEUP.
func (r *ring) needWakeup() bool {
	return atomic.LoadUint32(r.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// addrRing is a fill or completion ring: entries are UMEM offsets.
type addrRing struct {
	ring
	addrs []uint64
}

// descRing is an RX or TX ring: entries are descriptors.
type descRing struct {
	ring
	descs []unix.XDPDesc
}

// mapRing mmaps the ring at page offset pgoff of fd with n entries of
// entSize bytes and the kernel's offsets.
func mapRing(fd int, off unix.XDPRingOffset, pgoff int64, n, entSize int) (ring, unsafe.Pointer, error) {
	size := int(off.Desc) + n*entSize
	mem, err := unix.Mmap(fd, pgoff, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return ring{}, nil, err
	}
	base := unsafe.Pointer(&mem[0])
	r := ring{
		prod:  (*uint32)(unsafe.Add(base, off.Producer)),
		cons:  (*uint32)(unsafe.Add(base, off.Consumer)),
		flags: (*uint32)(unsafe.Add(base, off.Flags)),
		size:  uint32(n),
		mask:  uint32(n - 1),
		mem:   mem,
	}
	r.cachedProd = atomic.LoadUint32(r.prod)
	r.cachedCons = atomic.LoadUint32(r.cons)
	return r, unsafe.Add(base, off.Desc), nil
}

func mapAddrRing(fd int, off unix.XDPRingOffset, pgoff int64, n int) (*addrRing, error) {
	r, p, err := mapRing(fd, off, pgoff, n, 8)
	if err != nil {
		return nil, err
	}
	return &addrRing{ring: r, addrs: unsafe.Slice((*uint64)(p), n)}, nil
}

func mapDescRing(fd int, off unix.XDPRingOffset, pgoff int64, n int) (*descRing, error) {
	r, p, err := mapRing(fd, off, pgoff, n, int(unsafe.Sizeof(unix.XDPDesc{})))
	if err != nil {
		return nil, err
	}
	return &descRing{ring: r, descs: unsafe.Slice((*unix.XDPDesc)(p), n)}, nil
}

func (r *ring) unmap() {
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}

// memRing returns a ring of n entries in ordinary memory, its indices and
// flags in ctl (3 words): for tests that play the kernel's side.
func memRing(n int, ctl *[3]uint32) ring {
	return ring{prod: &ctl[0], cons: &ctl[1], flags: &ctl[2], size: uint32(n), mask: uint32(n - 1)}
}
