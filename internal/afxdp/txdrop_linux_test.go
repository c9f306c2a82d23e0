//go:build linux

package afxdp

import (
	"os/exec"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// TestSendPastDeviceDrops: a copy-mode wake-up stops at the first frame the
// device drops (EBUSY); Send must wake the kernel again at once so every
// queued frame meets its fate in the same call, and count the drops. The
// peer veth is down, so the device drops every frame (carrier off).
func TestSendPastDeviceDrops(t *testing.T) {
	p := newPair(t)
	if out, err := exec.Command("ip", "-n", p.nsB, "link", "set", p.ifB, "down").CombinedOutput(); err != nil {
		t.Fatalf("set %s down: %v %s", p.ifB, err, out)
	}
	tx := open(t, p.nsA, Config{Interface: p.ifA, TX: true})
	if tx.Features().ZeroCopy {
		t.Skip("zero-copy socket: the copy-mode wake-up under test does not run")
	}
	if err := tx.PrepareTx([]TxStream{{ID: 1, Templates: []*framing.Template{p.template(t, 64, 7)}}}); err != nil {
		t.Fatal(err)
	}
	const n = 500
	k, err := tx.Send(0, n, 1, 0, time.Now().UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	if k != n {
		t.Fatalf("queued %d of %d", k, n)
	}
	st, err := tx.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if left := tx.InFlight(); left != 0 || st.TxDeviceDrops != n {
		t.Errorf("after one Send of %d frames to a dropping device: %d still in flight, %d counted dropped; want 0 and %d",
			n, left, st.TxDeviceDrops, n)
	}
}
