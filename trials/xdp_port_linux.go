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
	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/sys/unix"
)

// UMEM and ring geometry of an xdp port: half the chunks receive, half
// send. The receive side holds 16 384 frames like the raw transport's RX
// ring (11 ms at 1.49 Mfps, 0.2 s at 81 kfps of 1518 B), so a receive loop
// the host did not schedule for a while does not drop; 64 MiB of UMEM per
// port.
const (
	xdpFrames = 32768
	xdpRing   = 16384
	xdpNap    = 200 * time.Microsecond
)

// xdpPort is one port of the xdp transport: an AF_XDP socket on queue 0
// (test frames out and in; its XDP program redirects only test frames to
// it) and an AF_PACKET control socket filtered to ARP and neighbor
// discovery (receiveFilter(0)), read by a goroutine for the port's whole
// life: it answers the DUT's ARP/ND for the tester's addresses and learns
// the DUT's MAC, as the raw transport's receiver does.
type xdpPort struct {
	name  string
	cfg   PortConfig
	mac   [6]byte
	hwMAC [6]byte
	mtu   int
	xsk   *afxdp.Socket
	ctl   *afpacket.Socket

	sendMu  sync.Mutex
	sendBuf [ndFrameLen]byte

	gwMu            sync.Mutex
	gwMAC, gw6MAC   [6]byte
	gwKnown, gw6Kn  bool
	gwSeen, gw6Seen chan struct{}
	arpAnswered     atomic.Uint64

	stop atomic.Bool
	done chan struct{}

	// The trial's receiver (rxLoop), between receive and stopReceive.
	rxStop atomic.Bool
	rxDone chan struct{}
	stats0 afxdp.Stats
}

func (p *xdpPort) where() string {
	if p.cfg.Namespace == "" {
		return fmt.Sprintf("xdp port %s (interface %s)", p.name, p.cfg.Interface)
	}
	return fmt.Sprintf("xdp port %s (namespace %s, interface %s)", p.name, p.cfg.Namespace, p.cfg.Interface)
}

// openXDPPort opens the port's sockets inside its namespace and starts the
// control loop. An AF_XDP error keeps afxdp.ErrNotSupported and its
// advice (the raw transport).
func openXDPPort(name string, cfg PortConfig, c Config) (*xdpPort, error) {
	p := &xdpPort{name: name, cfg: cfg, gwSeen: make(chan struct{}), gw6Seen: make(chan struct{}), done: make(chan struct{})}
	err := nsutil.Do(cfg.Namespace, func() error {
		ifi, err := net.InterfaceByName(cfg.Interface)
		if err != nil {
			return fmt.Errorf("no interface %q: %w (check the port's interface and namespace)", cfg.Interface, err)
		}
		if ifi.Flags&net.FlagUp == 0 {
			return fmt.Errorf("interface %q is down: bring it up (ip link set %s up)", cfg.Interface, cfg.Interface)
		}
		if len(ifi.HardwareAddr) != 6 {
			return fmt.Errorf("interface %q has no Ethernet address: the xdp transport needs an Ethernet port", cfg.Interface)
		}
		copy(p.hwMAC[:], ifi.HardwareAddr)
		p.mac = p.hwMAC
		if len(cfg.TesterMAC) == 6 {
			copy(p.mac[:], cfg.TesterMAC)
		} else if !c.UseInterfaceMAC {
			p.mac = emulatedMAC(p.hwMAC)
		}
		p.mtu = ifi.MTU
		if p.ctl, err = afpacket.Open(cfg.Interface); err != nil {
			return err
		}
		p.xsk, err = afxdp.Open(afxdp.Config{Interface: cfg.Interface, RX: true, TX: true, DstPort: framing.DefaultDstPort,
			Frames: xdpFrames, RingSize: xdpRing})
		return err
	})
	if err == nil {
		err = p.setupCtl()
	}
	if err != nil {
		p.closeSockets()
		if errors.Is(err, os.ErrPermission) && !errors.Is(err, afxdp.ErrNotSupported) {
			return nil, fmt.Errorf("open %s: %w: the xdp transport needs root (CAP_NET_RAW, CAP_NET_ADMIN, CAP_BPF)", p.where(), err)
		}
		return nil, fmt.Errorf("open %s: %w", p.where(), err)
	}
	go p.ctlLoop()
	return p, nil
}

// setupCtl readies the control socket: ARP/ND only, the tester's MAC and
// solicited-node group accepted, bound to every protocol.
func (p *xdpPort) setupCtl() error {
	f, err := receiveFilter(0)
	if err != nil {
		return err
	}
	if err := p.ctl.AttachFilter(f); err != nil {
		return err
	}
	_ = p.ctl.SetIgnoreOutgoing()
	if p.mac != p.hwMAC {
		if err := p.ctl.AddUnicast(p.mac); err != nil {
			return fmt.Errorf("accept frames for the tester's MAC %v: %w", net.HardwareAddr(p.mac[:]), err)
		}
	}
	if a := p.cfg.Addr6; a.IsValid() {
		if err := p.ctl.AddMulticast(multicastMAC(solicitedNode(a.Addr()))); err != nil {
			return fmt.Errorf("join the solicited-node group of %v: %w", a.Addr(), err)
		}
	}
	return p.ctl.Bind(unix.ETH_P_ALL)
}

// ctlLoop reads ARP and ND frames until the port closes.
func (p *xdpPort) ctlLoop() {
	defer close(p.done)
	var buf [2048]byte
	for !p.stop.Load() {
		if ok, err := p.ctl.Poll(50*time.Millisecond, afpacket.PollIn); err != nil || !ok {
			if err != nil {
				time.Sleep(10 * time.Millisecond)
			}
			continue
		}
		for {
			n, _, err := unix.Recvfrom(p.ctl.FD(), buf[:], unix.MSG_DONTWAIT)
			if err != nil || n < 14 {
				break
			}
			f := buf[:n]
			if f[12] == 0x08 && f[13] == 0x06 {
				p.handleARP(f)
			} else if n > 20 && f[12] == 0x86 && f[13] == 0xdd && f[20] == ipProtoICMPv6 {
				p.handleND(f)
			}
		}
	}
}

func (p *xdpPort) sendARP(dst [6]byte, a arpPacket) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	n := putARP(p.sendBuf[:], dst, p.mac, a)
	return p.ctl.Send(p.sendBuf[:n])
}

func (p *xdpPort) sendND(typ uint8, target, dst netip.Addr, dstMAC [6]byte) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	n := putND(p.sendBuf[:], typ, p.mac, p.cfg.Addr6.Addr(), target, dst, dstMAC)
	return p.ctl.Send(p.sendBuf[:n])
}

// handleARP answers requests for the port's address and learns the
// gateway's MAC from its replies and requests.
func (p *xdpPort) handleARP(f []byte) {
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

// handleND answers solicitations for the port's IPv6 address and learns the
// gateway's MAC.
func (p *xdpPort) handleND(f []byte) {
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
			p.gw6MAC, p.gw6Kn = mac, true
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
	}
}

// resolve learns the gateway's MAC (ARP, or ND for v6), asking every
// 200 ms up to timeout; force asks even when it is known (learning frames).
func (p *xdpPort) resolve(timeout time.Duration, force, v6 bool) ([6]byte, error) {
	if v6 && (!p.cfg.Addr6.IsValid() || !p.cfg.Gateway6.IsValid()) {
		return [6]byte{}, fmt.Errorf("%s: IPv6 trial without addr6 and gateway6: give the port's IPv6 address and the DUT's", p.where())
	}
	known := func() ([6]byte, bool, chan struct{}) {
		p.gwMu.Lock()
		defer p.gwMu.Unlock()
		if v6 {
			return p.gw6MAC, p.gw6Kn, p.gw6Seen
		}
		return p.gwMAC, p.gwKnown, p.gwSeen
	}
	if m, ok, _ := known(); ok && !force {
		return m, nil
	}
	deadline := time.Now().Add(timeout)
	tries := 0
	for {
		_, _, seen := known()
		var err error
		if v6 {
			err = p.sendND(ndSolicit, p.cfg.Gateway6, netip.Addr{}, [6]byte{})
		} else {
			err = p.sendARP(broadcastMAC, arpPacket{Op: arpRequest, SenderHW: p.mac, SenderIP: p.cfg.Addr.Addr(), TargetIP: p.cfg.Gateway})
		}
		if err != nil {
			return [6]byte{}, fmt.Errorf("%s: send a resolution request: %w", p.where(), err)
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
			m, _, _ := known()
			return m, nil
		case <-t.C:
		}
	}
	gw, from, what := p.cfg.Gateway, p.cfg.Addr.Addr(), "ARP reply"
	if v6 {
		gw, from, what = p.cfg.Gateway6, p.cfg.Addr6.Addr(), "neighbor advertisement"
	}
	return [6]byte{}, fmt.Errorf("%s: %w: no %s from %v for %v (%d requests from %v): check the DUT's address on this side, its link and that it answers",
		p.where(), ErrNoAnswer, what, gw, timeout, tries, from)
}

// startRx starts the trial's receive loop counting into t.
func (p *xdpPort) startRx(t *rxTrial, cpu int) error {
	s, err := p.xsk.Stats()
	if err != nil {
		return fmt.Errorf("%s: %w", p.where(), err)
	}
	p.stats0 = s
	p.rxStop.Store(false)
	p.rxDone = make(chan struct{})
	go p.rxLoop(t, cpu)
	return nil
}

// rxLoop hands every frame the socket receives, with its kernel receive
// time, to the shared receiver (rxTrial.frame), until rxStop.
func (p *xdpPort) rxLoop(t *rxTrial, cpu int) {
	defer close(p.rxDone)
	if cpu >= 0 {
		runtime.LockOSThread()
		pinThread(cpu)
	}
	frames := make([]afxdp.Frame, 256)
	for !p.rxStop.Load() {
		// Nap instead of poll when the ring is empty: a sleeper in poll
		// makes the kernel wake this thread for every frame, work done
		// on the CPU that forwards and sends (as the raw receiver does).
		n, err := p.xsk.Receive(frames, 0)
		if err != nil || n == 0 {
			time.Sleep(xdpNap)
			continue
		}
		for _, f := range frames[:n] {
			t.frame(f.Data, len(f.Data), f.RxNs)
		}
	}
}

// stopRx stops the receive loop and returns the frames the socket dropped
// during the trial (its RX ring full, no free fill chunk).
func (p *xdpPort) stopRx() (uint64, error) {
	if p.rxDone == nil {
		return 0, nil
	}
	p.rxStop.Store(true)
	<-p.rxDone
	p.rxDone = nil
	s, err := p.xsk.Stats()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.where(), err)
	}
	a := p.stats0
	// The kernel counts a frame dropped for want of a fill chunk twice
	// (rx_dropped and rx_fill_ring_empty_descs): the larger of the two.
	return (s.RxRingFull - a.RxRingFull) + max(s.RxDropped-a.RxDropped, s.FillRingEmpty-a.FillRingEmpty), nil
}

func (p *xdpPort) close() error {
	p.stop.Store(true)
	<-p.done
	return p.closeSockets()
}

func (p *xdpPort) closeSockets() error {
	var errs []error
	if p.xsk != nil {
		errs = append(errs, p.xsk.Close())
	}
	if p.ctl != nil {
		errs = append(errs, p.ctl.Close())
	}
	return errors.Join(errs...)
}
