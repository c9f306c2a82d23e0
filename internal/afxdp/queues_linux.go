//go:build linux

package afxdp

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
)

// QueueCount returns the receive and transmit queue counts of the
// interface named iface in the calling thread's network namespace
// (IFLA_NUM_RX_QUEUES and IFLA_NUM_TX_QUEUES, as netlink reports them).
func QueueCount(iface string) (rx, tx int, err error) {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return 0, 0, fmt.Errorf("afxdp: look up interface %q: %w", iface, err)
	}
	a := l.Attrs()
	return a.NumRxQueues, a.NumTxQueues, nil
}

// CheckQueues refuses n queues on iface when n is below 1 or above the
// interface's receive or transmit queue count; the error names the count
// and the fix. It runs in the calling thread's network namespace.
func CheckQueues(iface string, n int) error {
	if n < 1 {
		return fmt.Errorf("afxdp: %d queues: want 1 or more", n)
	}
	rx, tx, err := QueueCount(iface)
	if err != nil {
		return err
	}
	if have := min(rx, tx); have > 0 && n > have {
		return fmt.Errorf("afxdp: %d queues on %s: the interface has %d receive and %d transmit queues; use at most %d, or give the interface more (ethtool -L %s combined %d; a veth: numtxqueues/numrxqueues at creation)",
			n, iface, rx, tx, have, iface, n)
	}
	return nil
}

// OpenQueues opens n sockets on cfg.Interface, socket q bound to queue q
// (cfg.Queue is ignored), each with its own UMEM of cfg.Frames chunks and
// its own rings. With cfg.RX they share one XDP program and one socket map
// (n entries): the program, attached once, redirects a test frame to the
// socket of the queue it arrived on. Close them with CloseQueues. The
// queue count is checked first (CheckQueues).
func OpenQueues(cfg Config, n int) ([]*Socket, error) {
	cfg.Queue = 0
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := CheckQueues(cfg.Interface, n); err != nil {
		return nil, err
	}
	socks := make([]*Socket, 0, n)
	for q := range n {
		c := cfg
		c.Queue = q
		var owner *Socket
		if q > 0 {
			owner = socks[0]
		}
		s, err := openShared(c, owner, n)
		if err != nil {
			return nil, errors.Join(err, CloseQueues(socks))
		}
		socks = append(socks, s)
	}
	return socks, nil
}

// CloseQueues closes sockets opened by OpenQueues, the ones sharing the
// first socket's XDP program before it.
func CloseQueues(socks []*Socket) error {
	var errs []error
	for i := len(socks) - 1; i >= 0; i-- {
		if socks[i] != nil {
			errs = append(errs, socks[i].Close())
		}
	}
	return errors.Join(errs...)
}
