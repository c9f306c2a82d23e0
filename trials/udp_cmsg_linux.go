//go:build linux

package trials

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// parseUDPControl reads SCM_TIMESTAMPNS (Unix ns) and SO_RXQ_OVFL (the
// socket's cumulative drop count) from control messages. It does not
// allocate.
func parseUDPControl(b []byte) (tsNs int64, ovfl uint32, okTs, okOvfl bool) {
	const align = int(unsafe.Sizeof(uintptr(0)))
	hdrLen := unix.CmsgLen(0)
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < hdrLen || l > len(b) {
			return
		}
		data := b[hdrLen:l]
		if h.Level == unix.SOL_SOCKET {
			switch h.Type {
			case unix.SCM_TIMESTAMPNS:
				if len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
					ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
					tsNs, okTs = ts.Nano(), true
				}
			case unix.SO_RXQ_OVFL:
				if len(data) >= 4 {
					ovfl, okOvfl = *(*uint32)(unsafe.Pointer(&data[0])), true
				}
			}
		}
		next := (l + align - 1) &^ (align - 1)
		if next >= len(b) {
			return
		}
		b = b[next:]
	}
	return
}
