//go:build linux

package afxdp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// TestQueueSteeringOnVeth: on a veth pair with two queues per end, frames an
// AF_XDP socket sends on transmit queue q arrive on the peer's receive queue
// q: a socket bound there gets every one, a socket bound to the other queue
// none (they go to the kernel). This is what several queues per port
// (issue 14, --queues) would stand on in the lab; the transport still binds
// one socket on queue 0 per port.
func TestQueueSteeringOnVeth(t *testing.T) {
	for _, tc := range []struct{ txq, rxq, want int }{{0, 0, 2000}, {1, 1, 2000}, {1, 0, 0}, {0, 1, 0}} {
		t.Run(fmt.Sprintf("tx%d-rx%d", tc.txq, tc.rxq), func(t *testing.T) {
			const n = 2000
			p := newPairQueues(t, 2)
			rx := open(t, p.nsB, Config{Interface: p.ifB, RX: true, DstPort: 7, Queue: tc.rxq})
			tx := open(t, p.nsA, Config{Interface: p.ifA, TX: true, Queue: tc.txq})
			if err := tx.PrepareTx([]TxStream{{ID: 5, Templates: []*framing.Template{p.template(t, 64, 7)}}}); err != nil {
				t.Fatal(err)
			}
			res, err := tx.Generate(context.Background(), 0, 9, 20000, n*time.Second/20000, 64)
			if err != nil {
				t.Fatal(err)
			}
			frames := make([]Frame, 64)
			got := 0
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
				k, err := rx.Receive(frames, 50*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				got += k
			}
			st, _ := rx.Stats()
			t.Logf("sent %d on tx queue %d; the socket on rx queue %d received %d; rx stats %+v", res.Sent, tc.txq, tc.rxq, got, st)
			if res.Sent != n || got != tc.want {
				t.Errorf("sent %d of %d on tx queue %d, received %d on rx queue %d; want %d", res.Sent, n, tc.txq, got, tc.rxq, tc.want)
			}
		})
	}
}
