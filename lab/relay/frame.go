package relay

import (
	"encoding/binary"
	"net"
)

// Frame rewriting, pure and allocation-free.

const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86dd
)

// Verdicts of rewriteFrame.
const (
	frameForward = iota + 1
	frameNotIP   // not IPv4/IPv6, or truncated
	frameExpired // TTL or hop limit exhausted
	frameLocal   // for the DUT itself (its addresses, link-local, multicast)
)

// dutAddrs are the DUT's own addresses, whose traffic the relay leaves to
// the kernel.
type dutAddrs struct {
	v4 [][4]byte
	v6 [][16]byte
}

func (d *dutAddrs) local4(a []byte) bool {
	for i := range d.v4 {
		if string(d.v4[i][:]) == string(a) {
			return true
		}
	}
	return false
}

func (d *dutAddrs) local6(a []byte) bool {
	if a[0] == 0xff || (a[0] == 0xfe && a[1]&0xc0 == 0x80) {
		return true // multicast, link-local
	}
	for i := range d.v6 {
		if string(d.v6[i][:]) == string(a) {
			return true
		}
	}
	return false
}

// rewriteFrame turns an Ethernet frame received by the DUT into the frame
// it forwards: MACs set to dst and src, IPv4 TTL decremented with the
// header checksum updated incrementally (RFC 1624), IPv6 hop limit
// decremented. It returns a verdict; the frame is changed only when the
// verdict is frameForward.
func rewriteFrame(f []byte, dst, src net.HardwareAddr, local *dutAddrs) int {
	if len(f) < 14 {
		return frameNotIP
	}
	switch binary.BigEndian.Uint16(f[12:14]) {
	case etherTypeIPv4:
		ip := f[14:]
		if len(ip) < 20 || ip[0]>>4 != 4 {
			return frameNotIP
		}
		if local.local4(ip[16:20]) {
			return frameLocal
		}
		if ip[8] <= 1 {
			return frameExpired
		}
		ip[8]--
		// The TTL is the high byte of header word 4: the sum drops by
		// 0x0100, so the (complemented) checksum rises by 0x0100.
		c := uint32(binary.BigEndian.Uint16(ip[10:12])) + 0x0100
		c = (c & 0xffff) + (c >> 16)
		binary.BigEndian.PutUint16(ip[10:12], uint16(c))
	case etherTypeIPv6:
		ip := f[14:]
		if len(ip) < 40 || ip[0]>>4 != 6 {
			return frameNotIP
		}
		if local.local6(ip[24:40]) {
			return frameLocal
		}
		if ip[7] <= 1 {
			return frameExpired
		}
		ip[7]--
	default:
		return frameNotIP
	}
	copy(f[0:6], dst)
	copy(f[6:12], src)
	return frameForward
}

// slotHeap is a binary min-heap of slot indices ordered by due time, then
// arrival sequence. It never allocates after construction.
type slotHeap struct {
	idx []int32
	due []int64  // due time by slot, ns
	seq []uint64 // arrival sequence by slot
}

func newSlotHeap(n int) *slotHeap {
	return &slotHeap{idx: make([]int32, 0, n), due: make([]int64, n), seq: make([]uint64, n)}
}

func (h *slotHeap) less(i, j int) bool {
	a, b := h.idx[i], h.idx[j]
	if h.due[a] != h.due[b] {
		return h.due[a] < h.due[b]
	}
	return h.seq[a] < h.seq[b]
}

func (h *slotHeap) len() int { return len(h.idx) }

// push adds slot s due at due (ns) with arrival sequence seq.
func (h *slotHeap) push(s int32, due int64, seq uint64) {
	h.due[s], h.seq[s] = due, seq
	h.idx = append(h.idx, s)
	i := len(h.idx) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.idx[i], h.idx[p] = h.idx[p], h.idx[i]
		i = p
	}
}

// peek returns the earliest slot and its due time; ok is false when empty.
func (h *slotHeap) peek() (s int32, due int64, ok bool) {
	if len(h.idx) == 0 {
		return 0, 0, false
	}
	return h.idx[0], h.due[h.idx[0]], true
}

// pop removes the earliest slot.
func (h *slotHeap) pop() int32 {
	top := h.idx[0]
	n := len(h.idx) - 1
	h.idx[0] = h.idx[n]
	h.idx = h.idx[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h.idx[i], h.idx[m] = h.idx[m], h.idx[i]
		i = m
	}
	return top
}

// ipChecksum is the Internet checksum (RFC 1071) of b.
func ipChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// udpFrame builds an Ethernet/IPv4/UDP frame of size bytes (FCS excluded).
func udpFrame(dst, src net.HardwareAddr, sip, dip [4]byte, size int) []byte {
	f := make([]byte, size)
	copy(f[0:6], dst)
	copy(f[6:12], src)
	binary.BigEndian.PutUint16(f[12:14], etherTypeIPv4)
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(size-14))
	ip[8] = 64
	ip[9] = 17 // UDP
	copy(ip[12:16], sip[:])
	copy(ip[16:20], dip[:])
	binary.BigEndian.PutUint16(ip[10:12], ipChecksum(ip[:20]))
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:2], 9)
	binary.BigEndian.PutUint16(udp[2:4], 9)
	binary.BigEndian.PutUint16(udp[4:6], uint16(size-14-20))
	return f
}
