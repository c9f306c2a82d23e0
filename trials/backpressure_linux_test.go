//go:build linux

package trials

import (
	"runtime"
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
		x.drained(5e6)
		x.end()
	}); n != 0 {
		t.Errorf("tx pressure measurement allocates %v times, want 0", n)
	}
	// As on the sending thread: one locked OS thread. Thread CPU time
	// may be counted in scheduler ticks, so spin for several.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x.begin()
	x.kicked(true)
	x.kicked(false)
	func() {
		defer x.ringFull(time.Now())
		for s := time.Now(); time.Since(s) < 40*time.Millisecond; {
		} // on a CPU, waiting
	}()
	x.drained(-1) // a clock step back counts nothing
	x.drained(3e6)
	x.end()
	p := x.p
	if p.Kicks != 2 || p.Refused != 1 || p.RingFullWaits != 1 || p.RingFullNs < 40e6 || p.RingFullMaxNs != p.RingFullNs || p.WallNs < p.RingFullNs || p.DrainNs != 3e6 {
		t.Errorf("measured %+v", p)
	}
	// On a shared box the spinning thread gets what the scheduler gives
	// it: some CPU time, never more than the wall time (plus a tick).
	if p.CPUNs <= 0 || p.CPUNs > p.WallNs+int64(10*time.Millisecond) {
		t.Errorf("a thread spinning for 40 ms measured CPU %d ns over %d ns", p.CPUNs, p.WallNs)
	}
}
