package lab

import (
	"encoding/binary"
	"fmt"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// applyQdiscs installs the kernel DUT's egress qdiscs: the A→B direction
// on the port facing B, B→A on the port facing A. With a rate: tbf
// (rate, burst) over a pfifo of LimitPackets; with delay or jitter: netem
// at the root (and tbf under it); with only a limit: a pfifo.
func applyQdiscs(h *netlink.Handle, ns string, cfg Config) error {
	for _, d := range []struct {
		ifname string
		s      Shaping
		mtu    int
	}{{ifDutB, cfg.AtoB, cfg.MTUB}, {ifDutA, cfg.BtoA, cfg.MTUA}} {
		l, err := h.LinkByName(d.ifname)
		if err != nil {
			return fmt.Errorf("find link %s: %w", d.ifname, err)
		}
		idx := l.Attrs().Index
		parent := uint32(netlink.HANDLE_ROOT)
		if cfg.Delay > 0 || cfg.Jitter > 0 {
			limit := d.s.LimitPackets
			if limit == 0 {
				limit = defaultQLen
			}
			q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(1, 0), Parent: parent},
				netlink.NetemQdiscAttrs{Latency: uint32(cfg.Delay.Microseconds()), Jitter: uint32(cfg.Jitter.Microseconds()), Limit: limit})
			if err := h.QdiscAdd(q); err != nil {
				return fmt.Errorf("add netem qdisc on %s: %w", d.ifname, err)
			}
			parent = netlink.MakeHandle(1, 1)
		}
		switch {
		case d.s.RateBps > 0:
			burst := d.s.bucket(d.mtu)
			rate := d.s.RateBps / 8
			q := &netlink.Tbf{
				QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx, Handle: netlink.MakeHandle(2, 0), Parent: parent},
				Rate:       rate,
				Buffer:     netlink.Xmittime(rate, burst),
				Limit:      d.s.LimitPackets * uint32(d.mtu+ethHeader),
			}
			if err := h.QdiscAdd(q); err != nil {
				return fmt.Errorf("add tbf qdisc (rate %s, burst %d bytes) on %s: %w", FormatRate(d.s.RateBps), burst, d.ifname, err)
			}
			if err := addPfifo(ns, idx, netlink.MakeHandle(3, 0), netlink.MakeHandle(2, 1), d.s.LimitPackets); err != nil {
				return fmt.Errorf("add pfifo (limit %d packets) under tbf on %s: %w", d.s.LimitPackets, d.ifname, err)
			}
		case d.s.LimitPackets > 0 && parent == netlink.HANDLE_ROOT:
			if err := addPfifo(ns, idx, netlink.MakeHandle(3, 0), parent, d.s.LimitPackets); err != nil {
				return fmt.Errorf("add pfifo (limit %d packets) on %s: %w", d.s.LimitPackets, d.ifname, err)
			}
		}
	}
	return nil
}

// addPfifo adds a pfifo qdisc with a packet limit. vishvananda/netlink has
// no pfifo type, so the request is built here; it runs inside ns.
func addPfifo(ns string, ifindex int, handle, parent, limit uint32) error {
	return nsutil.Do(ns, func() error {
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_REPLACE|unix.NLM_F_ACK)
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: handle, Parent: parent})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("pfifo")))
		opt := make([]byte, 4) // struct tc_fifo_qopt { __u32 limit; }
		binary.NativeEndian.PutUint32(opt, limit)
		req.AddData(nl.NewRtAttr(nl.TCA_OPTIONS, opt))
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
}
