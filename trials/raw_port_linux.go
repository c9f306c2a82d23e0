//go:build linux

package trials

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/afpacket"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Ring geometry.
const (
	rxSlotSize = 256 // holds the tpacket header and rxSnapLen bytes
	rxSlots    = 16384
	// A small TX ring stays in cache: 1024 slots (256 KiB for 64-byte
	// frames) measured faster than 16384, and still hold four full-speed
	// batches; jumbo frames get fewer slots (at most 4 MiB). But a frame
	// holds its slot until the path frees it, and a veth lab's DUT holds
	// up to netdev_max_backlog (1000) in its backlog: a ring not well
	// above that lets an overrun DUT clock the sender (back-pressure)
	// instead of dropping, so 4096.
	txRingBytes = 4 << 20
	txMinSlots  = 256
	txMaxSlots  = 4096
	sndBufBytes = 16 << 20
	rxNap       = 200 * time.Microsecond
)

// port is one open tester port: a send socket (TX ring), a receive socket
// (RX ring, BPF filter) and the goroutine that reads it for the port's
// whole life, answering ARP and counting test frames.
type port struct {
	name string // "A" or "B"
	cfg  PortConfig
	// mac is the tester's identity on the port (test frames' source, ARP);
	// hwMAC the interface's own address.
	mac   [6]byte
	hwMAC [6]byte
	mtu   int
	paths Paths

	tx     *afpacket.Socket
	txRing *afpacket.Ring // nil: sendto path
	// txHead is the ring slot the kernel sends next; txSlotTpl the
	// template each slot holds (only the signature changes per frame).
	txHead    int
	txSlotTpl []*framing.Template
	rx        *afpacket.Socket
	rxRing    *afpacket.Ring
	rxHead    int

	sendMu  sync.Mutex // guards rx.Send (ARP, ND frames) from several goroutines
	sendBuf [ndFrameLen]byte

	// Gateway resolution.
	gwMu    sync.Mutex
	gwMAC   [6]byte
	gwKnown bool
	gwSeen  chan struct{} // closed and replaced on every reply from the gateway
	// The same for IPv6 (neighbor discovery).
	gw6MAC     [6]byte
	gw6Known   bool
	gw6Seen    chan struct{}
	ndAnswered atomic.Uint64

	// trialMu is held by the receive loop while it processes a batch; the
	// engine holds it to attach and detach a trial.
	trialMu sync.Mutex
	trial   *rxTrial

	stats   afpacket.Stats // accumulated PACKET_STATISTICS of rx
	statBuf [8]byte
	nl      *netlink.Handle // in the port's namespace, for link counters
	ifindex int
	noqueue bool // the port has no qdisc (e.g. a veth): see bypass

	rxCPU int // CPU the receive loop is pinned to, or -1
	// busy is set while a trial is attached (see receiveLoop).
	busy        atomic.Bool
	arpAnswered atomic.Uint64
	stop        atomic.Bool
	done        chan struct{}
}

func (p *port) where() string {
	if p.cfg.Namespace == "" {
		return fmt.Sprintf("port %s (interface %s)", p.name, p.cfg.Interface)
	}
	return fmt.Sprintf("port %s (namespace %s, interface %s)", p.name, p.cfg.Namespace, p.cfg.Interface)
}

// openPort opens the sockets of one port inside its namespace.
func openPort(name string, cfg PortConfig, c Config, txOnly bool) (*port, error) {
	p := &port{name: name, cfg: cfg, gwSeen: make(chan struct{}), gw6Seen: make(chan struct{}), done: make(chan struct{}),
		rxCPU: c.RxCPU - 1}
	err := nsutil.Do(cfg.Namespace, func() error {
		ifi, err := net.InterfaceByName(cfg.Interface)
		if err != nil {
			return fmt.Errorf("no interface %q: %w (check the port's interface and namespace)", cfg.Interface, err)
		}
		if ifi.Flags&net.FlagUp == 0 {
			ipcmd := "ip"
			if cfg.Namespace != "" {
				ipcmd = "ip -n " + cfg.Namespace
			}
			return fmt.Errorf("interface %q is down: bring it up (%s link set %s up)", cfg.Interface, ipcmd, cfg.Interface)
		}
		if len(ifi.HardwareAddr) != 6 {
			return fmt.Errorf("interface %q has no Ethernet address (%q): the raw transport needs an Ethernet port", cfg.Interface, ifi.HardwareAddr)
		}
		copy(p.hwMAC[:], ifi.HardwareAddr)
		p.mac = p.hwMAC
		if len(cfg.TesterMAC) == 6 {
			copy(p.mac[:], cfg.TesterMAC)
		} else if !c.UseInterfaceMAC {
			p.mac = emulatedMAC(p.hwMAC)
		}
		p.mtu = ifi.MTU
		p.ifindex = ifi.Index
		if p.tx, err = afpacket.Open(cfg.Interface); err != nil {
			return err
		}
		// Link counters (receive drops in the port itself) and the
		// port's qdisc; best effort: without them only socket drops are
		// seen and the qdisc is bypassed.
		p.nl, _ = netlink.NewHandle(unix.NETLINK_ROUTE)
		p.noqueue = rootQdiscIsNoqueue(p.nl, ifi.Index)
		if txOnly {
			return nil
		}
		if p.rx, err = afpacket.Open(cfg.Interface); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		p.closeSockets()
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("open %s: %w: raw sockets need root or CAP_NET_RAW", p.where(), err)
		}
		return nil, fmt.Errorf("open %s: %w", p.where(), err)
	}
	if txOnly {
		p.paths = Paths{Transport: "raw", TX: "sendto"}
		if err := p.tx.Bind(0); err != nil {
			p.closeSockets()
			return nil, fmt.Errorf("set up %s: %w", p.where(), err)
		}
		p.paths.QdiscBypass = p.bypass(c.QdiscPath) && p.tx.SetQdiscBypass() == nil
		_ = p.tx.SetSendBuffer(sndBufBytes)
		return p, nil
	}
	if err := p.setup(c); err != nil {
		p.closeSockets()
		return nil, fmt.Errorf("set up %s: %w", p.where(), err)
	}
	go p.receiveLoop()
	return p, nil
}

func (p *port) setup(c Config) error {
	p.paths = Paths{Transport: "raw"}
	// Send socket: bound with protocol 0 so it receives nothing.
	if err := p.tx.Bind(0); err != nil {
		return err
	}
	p.paths.QdiscBypass = p.bypass(c.QdiscPath) && p.tx.SetQdiscBypass() == nil
	_ = p.tx.SetSendBuffer(sndBufBytes)
	p.paths.TX = "sendto"
	// The TX ring is created per frame size (slot size), in prepareTx.

	// Receive socket: idle filter first, then ring, then bind.
	f, err := receiveFilter(0)
	if err != nil {
		return err
	}
	if err := p.rx.AttachFilter(f); err != nil {
		return err
	}
	_ = p.rx.SetIgnoreOutgoing()
	if p.mac != p.hwMAC {
		if err := p.rx.AddUnicast(p.mac); err != nil {
			return fmt.Errorf("accept frames for the tester's MAC %v: %w", macOf(p.mac), err)
		}
	}
	if a := p.cfg.Addr6; a.IsValid() {
		// Neighbor solicitations for the tester's IPv6 address.
		g := multicastMAC(solicitedNode(a.Addr()))
		if err := p.rx.AddMulticast(g); err != nil {
			return fmt.Errorf("join the solicited-node group of %v: %w", a.Addr(), err)
		}
	}
	if err := p.rx.EnableSoftwareTimestamps(); err != nil {
		return err
	}
	if p.rxRing, err = p.rx.SetupRing(false, rxSlotSize, rxSlots); err != nil {
		return err
	}
	p.paths.RX = "rx_ring"
	p.paths.Timestamps = "kernel-sw"
	if err := p.rx.Bind(unix.ETH_P_ALL); err != nil {
		return err
	}
	return p.rx.FetchStats(&p.statBuf) // reset
}

// prepareTx makes sure the TX path can carry frames of n bytes: a TX ring
// with slots large enough, unless disabled. A socket can hold one ring for
// life, so a larger frame than the ring's slots reopens the send socket.
func (p *port) prepareTx(n int, noRing, qdiscPath bool) error {
	if noRing {
		p.paths.TX = "sendto"
		return nil
	}
	slot := afpacket.SlotSize(n)
	if p.txRing != nil && p.txRing.FrameSize >= slot {
		return nil
	}
	if p.txRing != nil {
		// Reopen the send socket for bigger slots.
		var s *afpacket.Socket
		err := nsutil.Do(p.cfg.Namespace, func() error {
			var err error
			s, err = afpacket.Open(p.cfg.Interface)
			return err
		})
		if err != nil {
			return fmt.Errorf("reopen send socket: %w", err)
		}
		_ = p.tx.Close()
		p.tx, p.txRing, p.txHead, p.txSlotTpl = s, nil, 0, nil
		if err := p.tx.Bind(0); err != nil {
			return err
		}
		p.paths.QdiscBypass = p.bypass(qdiscPath) && p.tx.SetQdiscBypass() == nil
		_ = p.tx.SetSendBuffer(sndBufBytes)
	}
	slot = max(slot, 256) // room to grow without reopening for small frames
	frames := min(max(txRingBytes/slot, txMinSlots), txMaxSlots)
	r, err := p.tx.SetupRing(true, slot, frames)
	if err != nil {
		// Fall back to sendto, and say so in Paths.
		p.paths.TX = "sendto"
		return nil
	}
	p.txRing = r
	p.paths.TX = "tx_ring"
	return nil
}

// sendFrame sends one frame on the receive socket (ARP), outside the ring.
func (p *port) sendARP(dst [6]byte, a arpPacket) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	n := putARP(p.sendBuf[:], dst, p.mac, a)
	return p.rx.Send(p.sendBuf[:n])
}

// requestGateway broadcasts an ARP request for the gateway (a learning
// frame: it also teaches the DUT the port's address).
func (p *port) requestGateway() error {
	return p.sendARP(broadcastMAC, arpPacket{Op: arpRequest, SenderHW: p.mac, SenderIP: p.cfg.Addr.Addr(),
		TargetIP: p.cfg.Gateway})
}

// resolve learns the gateway's MAC by ARP, retrying every 200 ms up to
// timeout. force re-resolves even if the MAC is known.
func (p *port) resolve(timeout time.Duration, force bool) ([6]byte, error) {
	p.gwMu.Lock()
	if p.gwKnown && !force {
		m := p.gwMAC
		p.gwMu.Unlock()
		return m, nil
	}
	p.gwMu.Unlock()
	deadline := time.Now().Add(timeout)
	tries := 0
	for {
		p.gwMu.Lock()
		seen := p.gwSeen
		p.gwMu.Unlock()
		if err := p.requestGateway(); err != nil {
			return [6]byte{}, fmt.Errorf("%s: send ARP request for %v: %w", p.where(), p.cfg.Gateway, err)
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
			p.gwMu.Lock()
			m := p.gwMAC
			p.gwMu.Unlock()
			return m, nil
		case <-t.C:
		}
		if time.Now().After(deadline) {
			break
		}
	}
	return [6]byte{}, fmt.Errorf("%s: %w: no ARP reply from %v for %v (%d requests from %v): check the DUT's address on this side, its link and that it answers ARP",
		p.where(), ErrNoAnswer, p.cfg.Gateway, timeout, tries, p.cfg.Addr.Addr())
}

// handleARP answers requests for the port's own address and learns the
// gateway's MAC from its replies and requests.
func (p *port) handleARP(f []byte) {
	a, ok := parseARP(f)
	if !ok {
		return
	}
	if a.SenderIP == p.cfg.Gateway && a.SenderIP.IsValid() && a.SenderHW[0]&1 == 0 {
		p.gwMu.Lock()
		p.gwMAC, p.gwKnown = a.SenderHW, true
		close(p.gwSeen)
		p.gwSeen = make(chan struct{})
		p.gwMu.Unlock()
	}
	if a.Op == arpRequest && a.TargetIP == p.cfg.Addr.Addr() {
		_ = p.sendARP(a.SenderHW, arpPacket{Op: arpReply, SenderHW: p.mac, SenderIP: p.cfg.Addr.Addr(),
			TargetHW: a.SenderHW, TargetIP: a.SenderIP})
		p.arpAnswered.Add(1)
	}
}

// sendND sends a neighbor solicitation or advertisement.
func (p *port) sendND(typ uint8, target, dst netip.Addr, dstMAC [6]byte) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	n := putND(p.sendBuf[:], typ, p.mac, p.cfg.Addr6.Addr(), target, dst, dstMAC)
	return p.rx.Send(p.sendBuf[:n])
}

// handleND answers solicitations for the port's IPv6 address and learns the
// gateway's MAC from its advertisements and solicitations.
func (p *port) handleND(f []byte) {
	a, ok := parseND(f)
	if !ok || !p.cfg.Addr6.IsValid() {
		return
	}
	if a.Src == p.cfg.Gateway6 && (a.Type == ndSolicit || a.Target == p.cfg.Gateway6) {
		mac := a.EthSrc
		if a.HasLL {
			mac = a.LL
		}
		if mac[0]&1 == 0 {
			p.gwMu.Lock()
			p.gw6MAC, p.gw6Known = mac, true
			close(p.gw6Seen)
			p.gw6Seen = make(chan struct{})
			p.gwMu.Unlock()
		}
	}
	if a.Type == ndSolicit && a.Target == p.cfg.Addr6.Addr() && !a.Src.IsUnspecified() {
		dst := a.EthSrc
		if a.HasLL {
			dst = a.LL
		}
		_ = p.sendND(ndAdvert, p.cfg.Addr6.Addr(), a.Src, dst)
		p.ndAnswered.Add(1)
	}
}

// resolve6 learns the IPv6 gateway's MAC by neighbor discovery, like
// resolve does by ARP.
func (p *port) resolve6(timeout time.Duration, force bool) ([6]byte, error) {
	if !p.cfg.Addr6.IsValid() || !p.cfg.Gateway6.IsValid() {
		return [6]byte{}, fmt.Errorf("%s: IPv6 trial without addr6 and gateway6: give the port's IPv6 address and the DUT's", p.where())
	}
	p.gwMu.Lock()
	if p.gw6Known && !force {
		m := p.gw6MAC
		p.gwMu.Unlock()
		return m, nil
	}
	p.gwMu.Unlock()
	deadline := time.Now().Add(timeout)
	tries := 0
	for time.Now().Before(deadline) {
		p.gwMu.Lock()
		seen := p.gw6Seen
		p.gwMu.Unlock()
		if err := p.sendND(ndSolicit, p.cfg.Gateway6, netip.Addr{}, [6]byte{}); err != nil {
			return [6]byte{}, fmt.Errorf("%s: send neighbor solicitation for %v: %w", p.where(), p.cfg.Gateway6, err)
		}
		tries++
		t := time.NewTimer(min(200*time.Millisecond, time.Until(deadline)))
		select {
		case <-seen:
			t.Stop()
			p.gwMu.Lock()
			m := p.gw6MAC
			p.gwMu.Unlock()
			return m, nil
		case <-t.C:
		}
	}
	return [6]byte{}, fmt.Errorf("%s: %w: no neighbor advertisement from %v for %v (%d solicitations from %v): check the DUT's IPv6 address on this side and its link",
		p.where(), ErrNoAnswer, p.cfg.Gateway6, timeout, tries, p.cfg.Addr6.Addr())
}

// receiveLoop reads the RX ring until stop: ARP is handled, test frames are
// counted into the attached trial.
func (p *port) receiveLoop() {
	defer close(p.done)
	if p.rxCPU >= 0 {
		runtime.LockOSThread()
		pinThread(p.rxCPU)
	}
	r := p.rxRing
	for !p.stop.Load() {
		if r.Status(p.rxHead)&afpacket.StatusUser == 0 {
			if p.busy.Load() {
				// During a trial, nap instead of poll: a sleeper in
				// poll makes the kernel wake this thread for every
				// frame (sk_data_ready), work done on the CPU that
				// forwards and sends. The ring holds 16384 frames,
				// far more than arrive in a nap.
				time.Sleep(rxNap)
				continue
			}
			if _, err := p.rx.Poll(50*time.Millisecond, afpacket.PollIn); err != nil {
				time.Sleep(10 * time.Millisecond)
			}
			continue
		}
		p.trialMu.Lock()
		t := p.trial
		for i := 0; i < 1024; i++ {
			st := r.Status(p.rxHead)
			if st&afpacket.StatusUser == 0 {
				break
			}
			data, origLen, ts := r.RxFrame(p.rxHead)
			if len(data) >= 14 {
				if data[12] == 0x08 && data[13] == 0x06 {
					p.handleARP(data)
				} else if data[12] == 0x86 && data[13] == 0xdd && len(data) > 20 && data[20] == ipProtoICMPv6 {
					p.handleND(data)
				} else if t != nil {
					t.frame(data, origLen, ts)
				}
			}
			r.SetStatus(p.rxHead, afpacket.StatusKernel)
			p.rxHead++
			if p.rxHead == r.Frames {
				p.rxHead = 0
			}
		}
		if t != nil {
			t.live.publish()
		}
		p.trialMu.Unlock()
	}
}

// attach installs t as the port's current trial (nil detaches) and returns
// the kernel drops counted since the last call.
func (p *port) attach(t *rxTrial) (afpacket.Stats, error) {
	p.trialMu.Lock()
	p.trial = t
	p.trialMu.Unlock()
	p.busy.Store(t != nil)
	return p.fetchStats()
}

func (p *port) fetchStats() (afpacket.Stats, error) {
	if err := p.rx.FetchStats(&p.statBuf); err != nil {
		return afpacket.Stats{}, err
	}
	s, err := afpacket.ParseStats(p.statBuf[:])
	if err != nil {
		return afpacket.Stats{}, err
	}
	p.stats = p.stats.Add(s)
	return s, nil
}

// bypass reports whether to set PACKET_QDISC_BYPASS: yes unless the caller
// wants the qdisc, or the port has none (noqueue, a veth's default), where
// the qdisc path is a direct transmit anyway and measured faster than the
// bypass (peers.sh, 64 B, medians of 4: 717 vs 702 kfps, trafgen 712).
func (p *port) bypass(qdiscPath bool) bool { return !qdiscPath && !p.noqueue }

// rootQdiscIsNoqueue reports whether the interface has no root qdisc.
func rootQdiscIsNoqueue(h *netlink.Handle, ifindex int) bool {
	if h == nil {
		return false
	}
	l, err := h.LinkByIndex(ifindex)
	if err != nil {
		return false
	}
	qs, err := h.QdiscList(l)
	if err != nil {
		return false
	}
	for _, q := range qs {
		if q.Attrs().Parent == netlink.HANDLE_ROOT {
			return q.Type() == "noqueue"
		}
	}
	return false
}

// linkRxDrops fetches the interface's receive drop counters (rx_dropped,
// rx_missed_errors, rx_fifo_errors: frames the port itself dropped before
// any socket saw them, e.g. a full backlog); ok is false when unavailable.
func (p *port) linkRxDrops() (n uint64, ok bool) {
	if p.nl == nil {
		return 0, false
	}
	l, err := p.nl.LinkByIndex(p.ifindex)
	if err != nil || l.Attrs().Statistics == nil {
		return 0, false
	}
	return linkDrops(l.Attrs().Statistics), true
}

func linkDrops(s *netlink.LinkStatistics) uint64 {
	return s.RxDropped + s.RxMissedErrors + s.RxFifoErrors
}

func (p *port) setFilter(runID uint8) error {
	f, err := receiveFilter(runID)
	if err != nil {
		return err
	}
	if err := p.rx.AttachFilter(f); err != nil {
		return fmt.Errorf("%s: %w", p.where(), err)
	}
	return nil
}

func (p *port) close() error {
	if p.rxRing != nil {
		p.stop.Store(true)
		<-p.done
	}
	return p.closeSockets()
}

func (p *port) closeSockets() error {
	var errs []error
	if p.nl != nil {
		p.nl.Close()
		p.nl = nil
	}
	if p.tx != nil {
		errs = append(errs, p.tx.Close())
	}
	if p.rx != nil {
		errs = append(errs, p.rx.Close())
	}
	return errors.Join(errs...)
}

func macOf(b [6]byte) net.HardwareAddr { return net.HardwareAddr(b[:]) }
