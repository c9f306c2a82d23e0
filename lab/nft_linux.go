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
	// nftSet is the FWSet address set.
	nftSet = "blocklist"
	// nftBatch is how many rules go into one netlink batch, and
	// nftSetBatch how many set elements.
	nftBatch    = 100
	nftSetBatch = 2000
)

// Rule tags (UserData) for reading counters back.
const (
	tagLossAB = "loss-ab"
	tagLossBA = "loss-ba"
	tagAccept = "accept"
	// With FWStateful: the IPv6 new-flow accept, conntrack's established
	// accept and invalid drop; with FWSet, the set lookup's drops.
	tagAccept6     = "accept6"
	tagEstablished = "ct-established"
	tagInvalid     = "ct-invalid"
	tagSet         = "set"
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
// configuration needs one. Rules, in order: with FWStateful "ct state
// established,related accept" and "ct state invalid drop"; with FWSet a
// lookup of the source address in a set of FWSet addresses ("ip saddr
// @blocklist drop"); FWRules linear non-matching rules; the random-loss
// rules; and a final counting accept, which with FWStateful accepts only new
// flows between test addresses (198.18.0.0/15, 2001:2::/48) under a drop
// policy, as a firewall's rule base does.
func applyNftables(ns netns.NsHandle, cfg Config) error {
	if cfg.FWRules == 0 && cfg.FWSet == 0 && !cfg.FWStateful && cfg.AtoB.LossPercent == 0 && cfg.BtoA.LossPercent == 0 {
		return nil
	}
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return fmt.Errorf("nftables in DUT namespace: %w", err)
	}
	t, c := nftObjects()
	if cfg.FWStateful {
		drop := nftables.ChainPolicyDrop
		c.Policy = &drop
	}
	conn.AddTable(t)
	conn.AddChain(c)
	if cfg.FWStateful {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagEstablished),
			Exprs: ctStateRule(expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED, expr.VerdictAccept)})
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagInvalid),
			Exprs: ctStateRule(expr.CtStateBitINVALID, expr.VerdictDrop)})
		if err := conn.Flush(); err != nil {
			return fmt.Errorf("add conntrack rules (needs nf_conntrack and nft_ct): %w", err)
		}
	}
	if cfg.FWSet > 0 {
		if err := addBlocklist(conn, t, c, cfg.FWSet); err != nil {
			return err
		}
	}
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
	if cfg.FWStateful {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagAccept), Exprs: newTestFlowRule(false)})
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagAccept6), Exprs: newTestFlowRule(true)})
	} else {
		conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagAccept), Exprs: []expr.Any{
			&expr.Counter{}, &expr.Verdict{Kind: expr.VerdictAccept},
		}})
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("add nftables forward chain: %w", err)
	}
	return nil
}

// ctStateRule is "ct state STATES counter VERDICT" (states: a mask of
// expr.CtStateBit*, in host order as the kernel keeps them).
func ctStateRule(states uint32, v expr.VerdictKind) []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(states), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
		&expr.Counter{},
		&expr.Verdict{Kind: v},
	}
}

// newTestFlowRule is the stateful rule base's explicit accept of new test
// flows: "ct state new ip saddr 198.18.0.0/15 ip daddr 198.18.0.0/15
// counter accept", or for IPv6 the same over 2001:2::/48.
func newTestFlowRule(v6 bool) []expr.Any {
	proto, off, ln := byte(unix.NFPROTO_IPV4), uint32(12), uint32(4)
	mask, net := []byte{255, 254, 0, 0}, []byte{198, 18, 0, 0}
	if v6 {
		proto, off, ln = unix.NFPROTO_IPV6, 8, 16
		mask = []byte{255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		net = []byte{0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	}
	e := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitNEW), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
	}
	for _, o := range []uint32{off, off + ln} { // source, then destination
		e = append(e,
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: o, Len: ln},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: ln, Mask: mask, Xor: make([]byte, ln)},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: net})
	}
	return append(e, &expr.Counter{}, &expr.Verdict{Kind: expr.VerdictAccept})
}

// addBlocklist adds the set "blocklist" of n IPv4 addresses in 10.0.0.0/8
// (which test traffic never uses) and the rule "meta nfproto ipv4 ip saddr
// @blocklist counter drop": one hash lookup per packet, however large n.
func addBlocklist(conn *nftables.Conn, t *nftables.Table, c *nftables.Chain, n int) error {
	set := &nftables.Set{Table: t, Name: nftSet, KeyType: nftables.TypeIPAddr}
	if err := conn.AddSet(set, nil); err != nil {
		return fmt.Errorf("add nftables set %s: %w", nftSet, err)
	}
	elems := make([]nftables.SetElement, 0, nftSetBatch)
	for i := range n {
		elems = append(elems, nftables.SetElement{Key: []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}})
		if len(elems) == nftSetBatch || i == n-1 {
			if err := conn.SetAddElements(set, elems); err != nil {
				return fmt.Errorf("add set elements: %w", err)
			}
			if err := conn.Flush(); err != nil {
				return fmt.Errorf("add %d addresses to set %s (elements %d-%d): %w", n, nftSet, i+2-len(elems), i+1, err)
			}
			elems = elems[:0]
		}
	}
	conn.AddRule(&nftables.Rule{Table: t, Chain: c, UserData: []byte(tagSet), Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Lookup{SourceRegister: 1, SetName: set.Name, SetID: set.ID},
		&expr.Counter{},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}})
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("add set lookup rule: %w", err)
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

// nftSize counts the rules of the DUT's forward chain and the addresses in
// its FWSet set (0 when there is none).
func nftSize(ns netns.NsHandle) (rules, elems int, err error) {
	conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		return 0, 0, fmt.Errorf("nftables in DUT namespace: %w", err)
	}
	t, c := nftObjects()
	rs, err := conn.GetRules(t, c)
	if err != nil {
		return 0, 0, fmt.Errorf("read nftables rules: %w", err)
	}
	set, err := conn.GetSetByName(t, nftSet)
	if err != nil {
		return len(rs), 0, nil // no set
	}
	es, err := conn.GetSetElements(set)
	if err != nil {
		return len(rs), 0, fmt.Errorf("read set %s: %w", nftSet, err)
	}
	return len(rs), len(es), nil
}
