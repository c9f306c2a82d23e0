package agent

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// TestReadWaitsForHeldBackPeer: a keyed read past its deadline waits one
// timeout more while the peer's segments arrive out of order (a lost one
// holds them back), at most maxHeldBack times, and through a quiet time
// (setQuiet) and one timeout after it; a peer that sends nothing is lost
// after one timeout, and so is any peer before the key.
func TestReadWaitsForHeldBackPeer(t *testing.T) {
	const timeout = 50 * time.Millisecond
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		name    string
		keyed   bool
		growing bool          // segments keep arriving out of order
		sendAt  time.Duration // when the peer's message arrives; 0: never
		wantErr bool
		checks  int           // calls to outOfOrder: one at the start, one per deadline
		quiet   time.Duration // setQuiet(now + quiet) before the read
	}{
		{name: "held back, then delivered", keyed: true, growing: true, sendAt: 5 * timeout / 2},
		{name: "silent peer", keyed: true, sendAt: 3 * timeout, wantErr: true, checks: 2},
		{name: "held back for ever", keyed: true, growing: true, wantErr: true, checks: 1 + maxHeldBack},
		{name: "not yet keyed", growing: true, sendAt: 3 * timeout, wantErr: true, checks: 0},
		{name: "silent in a quiet time, then delivered", keyed: true, quiet: 3 * timeout, sendAt: 5 * timeout / 2},
		// Quiet for 2 timeouts, lost one timeout after: the deadline
		// after the quiet time is the first one the count is looked at.
		{name: "silent past a quiet time", keyed: true, quiet: 2 * timeout, wantErr: true, checks: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer a.Close()
			defer b.Close()
			r, w := newConn(a), newConn(b)
			if tc.keyed {
				r.setKey(key, true)
				w.setKey(key, false)
			}
			var n, calls atomic.Uint32
			r.outOfOrder = func(net.Conn) (uint32, bool) {
				calls.Add(1)
				if tc.growing {
					return n.Add(1), true
				}
				return n.Load(), true
			}
			if tc.quiet > 0 {
				r.setQuiet(time.Now().Add(tc.quiet))
			}
			if tc.sendAt > 0 {
				tm := time.AfterFunc(tc.sendAt, func() { w.write(&wire.Keepalive{}) })
				defer tm.Stop()
			}
			m, err := r.read(timeout)
			switch {
			case tc.wantErr && !errors.Is(err, os.ErrDeadlineExceeded):
				t.Errorf("read: %v, %v; want the deadline's error", m, err)
			case !tc.wantErr && err != nil:
				t.Errorf("read: %v; want the keepalive", err)
			case !tc.wantErr && m.Type() != wire.TypeKeepalive:
				t.Errorf("read %s, want a keepalive", m.Type())
			}
			if got := int(calls.Load()); tc.wantErr && got != tc.checks {
				t.Errorf("%d looks at the out-of-order count, want %d", got, tc.checks)
			}
		})
	}
}
