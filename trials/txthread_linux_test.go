//go:build linux

package trials

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// txThread gives the sending thread a larger CPU share (as root) and pins
// it; restore gives the thread back exactly as it was: Go reuses it for
// other goroutines.
func TestTxThreadRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set0); err != nil {
		t.Fatal(err)
	}
	before, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	restore := txThread(0)
	during, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var set1 unix.CPUSet
	unix.SchedGetaffinity(0, &set1)
	if set1.Count() != 1 || !set1.IsSet(0) {
		t.Errorf("sending thread not pinned to CPU 0: %d CPUs", set1.Count())
	}
	if os.Geteuid() == 0 {
		if during.Nice != txNice || lastTxSched() != txSchedNice {
			t.Errorf("as root: nice %d (%q), want %d", during.Nice, lastTxSched(), txNice)
		}
	} else {
		t.Logf("not root: a lower nice is not permitted, the thread runs %q", lastTxSched())
	}
	restore()
	after, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after.Policy != before.Policy || after.Priority != before.Priority || after.Nice != before.Nice {
		t.Errorf("after restore: policy %d priority %d nice %d, want %d %d %d", after.Policy, after.Priority, after.Nice, before.Policy, before.Priority, before.Nice)
	}
	var set2 unix.CPUSet
	unix.SchedGetaffinity(0, &set2)
	if set2 != set0 {
		t.Errorf("after restore: affinity %d CPUs, want %d", set2.Count(), set0.Count())
	}
}
