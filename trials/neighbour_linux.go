//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afpacket"
	"github.com/rfc2544/rfc2544/internal/wait"
)

// neighbour is a port's ARP and neighbor-discovery side, shared by the
// transports that write whole Ethernet frames (raw, xdp): it answers the
// DUT's ARP and ND for the tester's addresses and learns the DUT's MAC
// (the port's gateway) from its replies and requests. The port's receive
// loop hands it every frame (handle); it sends on sock, outside any ring.
type neighbour struct {
	cfg   PortConfig
	mac   [6]byte          // the tester's identity on the port
	label string           // the port's where(), for errors
	sock  *afpacket.Socket // sends ARP and ND frames

	sendMu  sync.Mutex // guards sock.Send and sendBuf
	sendBuf [ndFrameLen]byte

	mu       sync.Mutex
	gw, gw6  learned // by ARP and by ND
	answered struct{ arp, nd atomic.Uint64 }
}

// learned is a gateway's MAC as last heard; seen is closed and replaced on
// every reply.
type learned struct {
	mac   [6]byte
	known bool
	seen  chan struct{}
}

// init readies n for a port: cfg and mac as the port uses them, label its
// where(), sock the socket ARP and ND go out on.
func (n *neighbour) init(cfg PortConfig, mac [6]byte, label string, sock *afpacket.Socket) {
	n.cfg, n.mac, n.label, n.sock = cfg, mac, label, sock
	n.gw.seen, n.gw6.seen = make(chan struct{}), make(chan struct{})
}

// acceptNeighbourFrames readies a receive socket for ARP and ND when no
// trial runs: the idle filter (receiveFilter(0)), outgoing frames ignored,
// frames to the tester's MAC (when not the interface's own) and to the
// solicited-node group of its IPv6 address accepted.
func acceptNeighbourFrames(s *afpacket.Socket, mac, hwMAC [6]byte, addr6 netip.Prefix) error {
	f, err := receiveFilter(0)
	if err != nil {
		return err
	}
	if err := s.AttachFilter(f); err != nil {
		return err
	}
	_ = s.SetIgnoreOutgoing()
	if mac != hwMAC {
		if err := s.AddUnicast(mac); err != nil {
			return fmt.Errorf("accept frames for the tester's MAC %v: %w", net.HardwareAddr(mac[:]), err)
		}
	}
	if addr6.IsValid() {
		if err := s.AddMulticast(multicastMAC(solicitedNode(addr6.Addr()))); err != nil {
			return fmt.Errorf("join the solicited-node group of %v: %w", addr6.Addr(), err)
		}
	}
	return nil
}

// handle takes an ARP or ND frame and reports whether f was one.
func (n *neighbour) handle(f []byte) bool {
	switch {
	case len(f) >= 14 && f[12] == 0x08 && f[13] == 0x06:
		n.handleARP(f)
	case len(f) > 20 && f[12] == 0x86 && f[13] == 0xdd && f[20] == ipProtoICMPv6:
		n.handleND(f)
	default:
		return false
	}
	return true
}

func (n *neighbour) sendARP(dst [6]byte, a arpPacket) error {
	n.sendMu.Lock()
	defer n.sendMu.Unlock()
	l := putARP(n.sendBuf[:], dst, n.mac, a)
	return n.sock.Send(n.sendBuf[:l])
}

// sendND sends a neighbor solicitation or advertisement.
func (n *neighbour) sendND(typ uint8, target, dst netip.Addr, dstMAC [6]byte) error {
	n.sendMu.Lock()
	defer n.sendMu.Unlock()
	l := putND(n.sendBuf[:], typ, n.mac, n.cfg.Addr6.Addr(), target, dst, dstMAC)
	return n.sock.Send(n.sendBuf[:l])
}

// heard records mac as the gateway's and wakes its waiters.
func (n *neighbour) heard(g *learned, mac [6]byte) {
	n.mu.Lock()
	g.mac, g.known = mac, true
	close(g.seen)
	g.seen = make(chan struct{})
	n.mu.Unlock()
}

// handleARP answers requests for the port's own address and learns the
// gateway's MAC from its replies and requests.
func (n *neighbour) handleARP(f []byte) {
	a, ok := parseARP(f)
	if !ok {
		return
	}
	if a.SenderIP == n.cfg.Gateway && a.SenderIP.IsValid() && a.SenderHW[0]&1 == 0 {
		n.heard(&n.gw, a.SenderHW)
	}
	if a.Op == arpRequest && a.TargetIP == n.cfg.Addr.Addr() {
		_ = n.sendARP(a.SenderHW, arpPacket{Op: arpReply, SenderHW: n.mac, SenderIP: n.cfg.Addr.Addr(),
			TargetHW: a.SenderHW, TargetIP: a.SenderIP})
		n.answered.arp.Add(1)
	}
}

// handleND answers solicitations for the port's IPv6 address and learns the
// gateway's MAC from its advertisements and solicitations.
func (n *neighbour) handleND(f []byte) {
	a, ok := parseND(f)
	if !ok || !n.cfg.Addr6.IsValid() {
		return
	}
	mac := a.EthSrc
	if a.HasLL {
		mac = a.LL
	}
	if a.Src == n.cfg.Gateway6 && (a.Type == ndSolicit || a.Target == n.cfg.Gateway6) && mac[0]&1 == 0 {
		n.heard(&n.gw6, mac)
	}
	if a.Type == ndSolicit && a.Target == n.cfg.Addr6.Addr() && !a.Src.IsUnspecified() {
		_ = n.sendND(ndAdvert, n.cfg.Addr6.Addr(), a.Src, mac)
		n.answered.nd.Add(1)
	}
}

// resolve learns the gateway's MAC (by ARP, or by ND when v6), asking
// every 200 ms up to timeout; force asks even when it is known (learning
// frames: a request also teaches the DUT the port's address).
func (n *neighbour) resolve(timeout time.Duration, force, v6 bool) ([6]byte, error) {
	if v6 && (!n.cfg.Addr6.IsValid() || !n.cfg.Gateway6.IsValid()) {
		return [6]byte{}, fmt.Errorf("%s: IPv6 trial without addr6 and gateway6: give the port's IPv6 address and the DUT's", n.label)
	}
	g := &n.gw
	if v6 {
		g = &n.gw6
	}
	state := func() ([6]byte, bool, chan struct{}) {
		n.mu.Lock()
		defer n.mu.Unlock()
		return g.mac, g.known, g.seen
	}
	if m, ok, _ := state(); ok && !force {
		return m, nil
	}
	gw, from, ask, what, proto := n.cfg.Gateway, n.cfg.Addr.Addr(), "ARP request", "ARP reply", "ARP"
	if v6 {
		gw, from, ask, what, proto = n.cfg.Gateway6, n.cfg.Addr6.Addr(), "neighbor solicitation", "neighbor advertisement", "neighbor discovery"
	}
	deadline := time.Now().Add(timeout)
	tries := 0
	for {
		_, _, seen := state()
		var err error
		if v6 {
			err = n.sendND(ndSolicit, gw, netip.Addr{}, [6]byte{})
		} else {
			err = n.sendARP(broadcastMAC, arpPacket{Op: arpRequest, SenderHW: n.mac, SenderIP: from, TargetIP: gw})
		}
		if err != nil {
			return [6]byte{}, fmt.Errorf("%s: send %s for %v: %w", n.label, ask, gw, err)
		}
		tries++
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		t := time.NewTimer(min(200*time.Millisecond, left))
		select {
		case <-seen:
			t.Stop()
			m, _, _ := state()
			return m, nil
		case <-t.C:
		}
	}
	return [6]byte{}, fmt.Errorf("%s: %w: no %s from %v for %v (%d %ss from %v): check the DUT's address on this side, its link and that it answers %s",
		n.label, ErrNoAnswer, what, gw, timeout, tries, ask, from, proto)
}

// resolveBoth resolves the gateway of both ports at once (see resolve).
func resolveBoth(nbs [2]*neighbour, timeout time.Duration, force, v6 bool) (macs [2][6]byte, err error) {
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, n := range nbs {
		wg.Go(func() { macs[i], errs[i] = n.resolve(timeout, force, v6) })
	}
	wg.Wait()
	return macs, errors.Join(errs...)
}

// learnBoth sends the learning frames of a trial on both ports (RFC 2544
// §23: ARP, or neighbor solicitations for IPv6) into macs or macs6, then
// waits Spec.Learning. IPv6 neighbours are resolved at the first IPv6
// trial even without learning.
func learnBoth(ctx context.Context, nbs [2]*neighbour, timeout time.Duration, spec Spec, macs, macs6 *[2][6]byte) error {
	if spec.Learning <= 0 && !spec.IPv6 {
		return nil
	}
	into, force := macs, true
	if spec.IPv6 {
		into, force = macs6, spec.Learning > 0
	}
	m, err := resolveBoth(nbs, timeout, force, spec.IPv6)
	if err != nil {
		return fmt.Errorf("learning: %w", err)
	}
	*into = m
	return wait.Sleep(ctx, spec.Learning)
}

// checkFrames checks a trial's frame size against a port's MTU, and that
// an IPv6 trial has the port's IPv6 addresses.
func (n *neighbour) checkFrames(spec Spec, mtu int) error {
	proto := framing.IPv4UDP
	if spec.IPv6 {
		proto = framing.IPv6UDP
		if !n.cfg.Addr6.IsValid() || !n.cfg.Gateway6.IsValid() {
			return fmt.Errorf("trial ipv6: %s has no addr6 and gateway6: configure the port's IPv6 address and the DUT's", n.label)
		}
	}
	if err := framing.ValidateFrameSize(spec.FrameSize, proto, false, mtu); err != nil {
		return fmt.Errorf("trial frame_size on %s (MTU %d): %w", n.label, mtu, err)
	}
	return nil
}
