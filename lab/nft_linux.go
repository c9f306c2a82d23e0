package lab

import (
	"encoding/binary"
	"fmt"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The kernel DUT's nftables objects: table inet rfc2544, base chain
// forward (hook forward, priority filter, policy accept). Rules, in order:
// FWRules non-matching firewall rules, one random-loss rule per shaped
// direction, and a final counting accept.
const (
	nftTable = "rfc2544"
	nftChain = "forward"
	// nftBatch is how many rules go into one netlink batch.
	nftBatch = 100
)

// Rule tags (UserData) for reading counters back.
const (
	tagLossAB = "loss-ab"
	tagLossBA = "loss-ba"
	tagAccept = "accept"
)

func nftObjects() (*nftables.Table, *nftables.Chain) {
	t := &nftables.Table{Name: nftTable, Family: nftables.TableFamilyINet}
	policy := nftables.ChainPolicyAccept
	c := &nftables.Chain{
		Name: nftChain, Table: t, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &policy,
	}
	return t, c
}

// applyNftables installs the kernel DUT's forward chain in ns, if the
// configuration needs one.
func applyNftables(ns netns.NsHandle, cfg Config) error {
	if cfg.FWRules == 0 && cfg.AtoB.LossPercent == 0 && cfg.BtoA.LossPercent == 0 {
		return nil
	}
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return fmt.Errorf("nftables in DUT namespace: %w", err)
	}
	t, c := nftObjects()
	conn.AddTable(t)
	conn.AddChain(c)
	for i := range cfg.FWRules {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, Exprs: fwRule(i)})
		if (i+1)%nftBatch == 0 {
			if err := conn.Flush(); err != nil {
				return fmt.Errorf("add firewall rules %d-%d: %w", i+2-nftBatch, i+1, err)
			}
		}
	}
	for _, d := range []struct {
		iif, tag string
		pct      float64
	}{{ifDutA, tagLossAB, cfg.AtoB.LossPercent}, {ifDutB, tagLossBA, cfg.BtoA.LossPercent}} {
		if d.pct == 0 {
			continue
		}
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(d.tag), Exprs: lossRule(d.iif, d.pct)})
	}
	conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagAccept), Exprs: []expr.Any{
		&expr.Counter{}, &expr.Verdict{Kind: expr.VerdictAccept},
	}})
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("add nftables forward chain: %w", err)
	}
	return nil
}

// fwRule is rule i of the firewall set: "meta nfproto ipv4 ip saddr
// 10.x.y.z tcp dport P drop", with a distinct source in 10.0.0.0/8 that
// test traffic (198.18.0.0/15) never matches, so every packet walks all of
// them.
func fwRule(i int) []expr.Any {
	src := []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: src},
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(uint16(1024 + i%60000))},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}
}

// lossRule is "iifname IIF numgen random mod 10000 < N counter drop". The
// random number is in host order; it is converted to network order so the
// kernel's byte-wise "<" compares numbers.
func lossRule(iif string, pct float64) []expr.Any {
	name := make([]byte, unix.IFNAMSIZ)
	copy(name, iif)
	thr := make([]byte, 4)
	binary.BigEndian.PutUint32(thr, lossThreshold(pct))
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: name},
		&expr.Numgen{Register: 1, Modulus: lossModulus, Type: unix.NFT_NG_RANDOM},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
		&expr.Cmp{Op: expr.CmpOpLt, Register: 1, Data: thr},
		&expr.Counter{},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}
}

// nftCounters reads the packet counters of the tagged rules in ns.
func nftCounters(ns netns.NsHandle) (map[string]uint64, error) {
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return nil, fmt.Errorf("nftables in DUT namespace: %w", err)
	}
	t, c := nftObjects()
	rules, err := conn.GetRules(t, c)
	if err != nil {
		return nil, fmt.Errorf("read nftables rules: %w", err)
	}
	out := map[string]uint64{}
	for _, r := range rules {
		if len(r.UserData) == 0 {
			continue
		}
		for _, e := range r.Exprs {
			if ctr, ok := e.(*expr.Counter); ok {
				out[string(r.UserData)] = ctr.Packets
			}
		}
	}
	return out, nil
}
