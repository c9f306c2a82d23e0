//go:build linux

package afxdp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/nsutil"
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

// TestOpenQueuesSharesProgram: OpenQueues opens one socket per queue of a
// two-queue veth, sharing one XDP program (a second attach would fail); a
// stream sent in turn on both transmit queues (SendStride, sequence
// numbers ≡ q mod 2 on queue q) arrives whole, each receive socket with
// its own queue's half. Three queues are refused naming the count.
func TestOpenQueuesSharesProgram(t *testing.T) {
	const n, perQ = 2, 1500 // under the 2048 receive chunks: all sent before any is read
	p := newPairQueues(t, n)
	var rxs, txs []*Socket
	var refused error
	err := nsutil.Do(p.nsB, func() (err error) {
		refused = CheckQueues(p.ifB, 3)
		rxs, err = OpenQueues(Config{Interface: p.ifB, RX: true, DstPort: 7}, n)
		return err
	})
	t.Cleanup(func() { _ = CloseQueues(rxs) })
	if err != nil {
		t.Fatal(err)
	}
	if refused == nil || !strings.Contains(refused.Error(), "2 receive") {
		t.Errorf("3 queues on a 2-queue veth: %v; want refused naming the 2 queues", refused)
	}
	err = nsutil.Do(p.nsA, func() (err error) {
		txs, err = OpenQueues(Config{Interface: p.ifA, TX: true}, n)
		return err
	})
	t.Cleanup(func() { _ = CloseQueues(txs) })
	if err != nil {
		t.Fatal(err)
	}
	for q, s := range txs {
		if err := s.PrepareTx([]TxStream{{ID: 5, Templates: []*framing.Template{p.template(t, 64, 7)}}}); err != nil {
			t.Fatal(err)
		}
		sent := 0
		for sent < perQ {
			k, err := s.SendStride(0, min(64, perQ-sent), 9, uint64(q+n*sent), n, time.Now().UnixNano())
			if err != nil {
				t.Fatal(err)
			}
			sent += k
		}
		if _, err := s.Flush(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	frames := make([]Frame, 64)
	seen := make([]bool, n*perQ)
	for q, s := range rxs {
		got, wrong := 0, 0
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && got < perQ; {
			k, err := s.Receive(frames, 20*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range frames[:k] {
				sig, err := framing.DecodeSignature(f.Data[framing.EthHeaderLen+framing.IPv4HeaderLen+framing.UDPHeaderLen:])
				if err != nil || sig.Seq >= uint64(len(seen)) || int(sig.Seq%n) != q || seen[sig.Seq] {
					wrong++
					continue
				}
				seen[sig.Seq] = true
				got++
			}
		}
		st, _ := s.Stats()
		t.Logf("queue %d: received %d test frames (%d wrong: other queue, repeated or unreadable); rx stats %+v", q, got, wrong, st)
		if got != perQ || wrong != 0 {
			t.Errorf("queue %d received %d of its %d frames and %d wrong", q, got, perQ, wrong)
		}
	}
}
