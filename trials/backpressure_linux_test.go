//go:build linux

package trials

import (
	"testing"
	"time"
)

// The measurements run on the sending thread in its loop: no allocation.
func TestTxPressureAllocs(t *testing.T) {
	var x txPressure
	if n := testing.AllocsPerRun(1000, func() {
		x.begin()
		x.kicked(false)
		x.kicked(true)
		func() { defer x.ringFull(time.Now()) }()
		x.end()
	}); n != 0 {
		t.Errorf("tx pressure measurement allocates %v times, want 0", n)
	}
	x.begin()
	x.kicked(true)
	x.kicked(false)
	func() {
		defer x.ringFull(time.Now())
		for s := time.Now(); time.Since(s) < 2*time.Millisecond; {
		} // on a CPU, waiting
	}()
	x.end()
	p := x.p
	if p.Kicks != 2 || p.Refused != 1 || p.RingFullWaits != 1 || p.RingFullNs < 2e6 || p.RingFullMaxNs != p.RingFullNs || p.WallNs < p.RingFullNs {
		t.Errorf("measured %+v", p)
	}
	if p.CPUNs <= 0 || p.Busy() < 0.5 {
		t.Errorf("a thread spinning for 2 ms measured CPU %d ns (busy %.2f)", p.CPUNs, p.Busy())
	}
}
