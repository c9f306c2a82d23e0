//go:build linux

package trials

import (
	"errors"
	"fmt"
	"net"
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

	// neighbour answers ARP and ND on rx and learns the DUT's MAC.
	neighbour

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
	busy atomic.Bool
	stop atomic.Bool
	done chan struct{}
}

func (p *port) where() string {
	if p.cfg.Namespace == "" {
		return fmt.Sprintf("port %s (interface %s)", p.name, p.cfg.Interface)
	}
	return fmt.Sprintf("port %s (namespace %s, interface %s)", p.name, p.cfg.Namespace, p.cfg.Interface)
}

// openPort opens the sockets of one port inside its namespace.
func openPort(name string, cfg PortConfig, c Config, txOnly bool) (*port, error) {
	p := &port{name: name, cfg: cfg, done: make(chan struct{}), rxCPU: c.RxCPU - 1}
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
	p.neighbour.init(p.cfg, p.mac, p.where(), p.rx)
	if err := acceptNeighbourFrames(p.rx, p.mac, p.hwMAC, p.cfg.Addr6); err != nil {
		return err
	}
	if err := p.rx.EnableSoftwareTimestamps(); err != nil {
		return err
	}
	var err error
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
			if len(data) >= 14 && !p.handle(data) && t != nil {
				t.frame(data, origLen, ts)
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
