package lab

import (
	"errors"
	"fmt"
	"os"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func (s *State) dutCounters() (DUTCounters, error) {
	var c DUTCounters
	if s.DUTNamespace == "" {
		return c, fmt.Errorf("lab %q has no DUT (topology %v)", s.Name, s.Topology)
	}
	err := nsutil.Do(s.DUTNamespace, func() error {
		b, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return fmt.Errorf("read DUT ip counters: %w", err)
		}
		c.Forwarded4 = parseSNMP(string(b))["Ip:ForwDatagrams"]
		b, err = os.ReadFile("/proc/thread-self/net/snmp6")
		if err != nil {
			return fmt.Errorf("read DUT ipv6 counters: %w", err)
		}
		c.Forwarded6 = parseSNMP6(string(b))["Ip6OutForwDatagrams"]
		return nil
	})
	if err != nil {
		return c, err
	}
	ns, err := netns.GetFromName(s.DUTNamespace)
	if err != nil {
		return c, fmt.Errorf("open DUT namespace: %w", err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return c, fmt.Errorf("netlink in DUT namespace: %w", err)
	}
	defer h.Close()
	for _, p := range []struct {
		name  string
		lc    *LinkCounters
		drops *uint64
	}{{ifDutA, &c.DutA, &c.QdiscDropsBA}, {ifDutB, &c.DutB, &c.QdiscDropsAB}} {
		l, err := h.LinkByName(p.name)
		if err != nil {
			return c, fmt.Errorf("find DUT link %s: %w", p.name, err)
		}
		if st := l.Attrs().Statistics; st != nil {
			*p.lc = LinkCounters{RxPackets: st.RxPackets, TxPackets: st.TxPackets, RxBytes: st.RxBytes,
				TxBytes: st.TxBytes, RxDropped: st.RxDropped, TxDropped: st.TxDropped}
		}
		qs, err := h.QdiscList(l)
		if err != nil {
			return c, fmt.Errorf("list qdiscs of %s: %w", p.name, err)
		}
		for _, q := range qs {
			if q.Attrs().Statistics != nil && q.Attrs().Parent == netlink.HANDLE_ROOT {
				*p.drops = uint64(q.Attrs().Statistics.Queue.Drops)
			}
		}
	}
	if s.Config.FWRules > 0 || s.Config.FWSet > 0 || s.Config.FWStateful || s.Config.AtoB.LossPercent > 0 || s.Config.BtoA.LossPercent > 0 {
		m, err := nftCounters(ns)
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return c, err
		}
		c.LossDropsAB, c.LossDropsBA = m[tagLossAB], m[tagLossBA]
		c.Accepted = m[tagAccept] + m[tagAccept6] + m[tagEstablished]
		c.InvalidDrops, c.SetDrops = m[tagInvalid], m[tagSet]
	}
	return c, nil
}
