//go:build linux

package afxdp

import (
	"testing"
	"time"
)

// TestRingProducerConsumer plays both sides of a 4-entry ring through many
// wrap-arounds of its free-running indices (started near 2^32).
func TestRingProducerConsumer(t *testing.T) {
	var ctl [3]uint32
	ctl[0], ctl[1] = 1<<32-3, 1<<32-3
	p := memRing(4, &ctl)
	p.cachedProd, p.cachedCons = ctl[0], ctl[1]
	c := memRing(4, &ctl)
	c.cachedProd, c.cachedCons = ctl[0], ctl[1]
	slots := make([]uint64, 4)
	var next, want uint64
	for round := range 50 {
		n := uint32(round%5 + 1)
		in := p.cachedProd - ctl[1]
		if k := p.free(n); k != min(n, 4-in) {
			t.Fatalf("round %d: free(%d) = %d with %d in the ring", round, n, k, in)
		}
		k := p.free(n)
		for i := range k {
			slots[(p.cachedProd+i)&p.mask] = next
			next++
		}
		p.submit(k)
		m := c.avail(uint32(round%3 + 1))
		for i := range m {
			if got := slots[(c.cachedCons+i)&c.mask]; got != want {
				t.Fatalf("round %d: read %d, want %d", round, got, want)
			}
			want++
		}
		c.release(m)
	}
	if want == 0 || next-want > 4 {
		t.Errorf("read %d of %d written", want, next)
	}
}

func TestRingNeedWakeup(t *testing.T) {
	var ctl [3]uint32
	r := memRing(8, &ctl)
	if r.needWakeup() {
		t.Error("needWakeup with flags 0")
	}
	ctl[2] = 1
	if !r.needWakeup() {
		t.Error("no needWakeup with XDP_RING_NEED_WAKEUP set")
	}
}

func TestDue(t *testing.T) {
	for _, tt := range []struct {
		name string
		rate float64
		el   time.Duration
		want uint64
	}{
		{"first frame at once", 1000, 0, 1},
		{"exact", 1000, time.Second, 1000},
		{"rounds up", 1000, 1500 * time.Microsecond, 2},
		{"fraction", 3, 500 * time.Millisecond, 2},
	} {
		if got := Due(tt.rate, tt.el); got != tt.want {
			t.Errorf("%s: Due(%v, %v) = %d, want %d", tt.name, tt.rate, tt.el, got, tt.want)
		}
	}
}
