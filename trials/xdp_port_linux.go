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
	xsk   *afxdp.Socket   // queue 0's socket (xsks[0])
	xsks  []*afxdp.Socket // one per queue (Config.Queues), sharing one XDP program
	ctl   *afpacket.Socket

	// neighbour answers ARP and ND on ctl and learns the DUT's MAC.
	neighbour

	stop atomic.Bool
	done chan struct{}

	// The trial's receivers (rxLoop, one per queue), between receive and
	// stopReceive; rxMu makes their counting into the one rxTrial take
	// turns, a batch at a time.
	rxStop  atomic.Bool
	rxDones []chan struct{}
	rxMu    sync.Mutex
	stats0  []afxdp.Stats
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
	p := &xdpPort{name: name, cfg: cfg, done: make(chan struct{})}
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
		n := max(c.Queues, 1)
		if n > 1 {
			if err := afxdp.CheckQueues(cfg.Interface, n); err != nil {
				return fmt.Errorf("queues %d (--queues): %w (a lab from 'rfc2544 lab up': --veth-queues %d)", n, err, n)
			}
		}
		stamp, err := afxdp.ParseStamp(c.XDPStamp)
		if err != nil {
			return err
		}
		p.xsks, err = afxdp.OpenQueues(afxdp.Config{Interface: cfg.Interface, RX: true, TX: true, DstPort: framing.DefaultDstPort,
			Frames: xdpQueueFrames(n), RingSize: xdpRing, Stamp: stamp}, n)
		if err == nil {
			p.xsk = p.xsks[0]
		}
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
	p.neighbour.init(p.cfg, p.mac, p.where(), p.ctl)
	if err := acceptNeighbourFrames(p.ctl, p.mac, p.hwMAC, p.cfg.Addr6); err != nil {
		return err
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
			p.handle(buf[:n])
		}
	}
}

// xdpQueueFrames is the UMEM chunks of each socket of a port with n
// queues: xdpFrames halved per doubling of n (each queue carries 1/n of
// the load), down to 4096, so a port's UMEM stays at most 64 MiB.
func xdpQueueFrames(n int) int {
	f := xdpFrames
	for k := 1; k < n && f > 4096; k *= 2 {
		f /= 2
	}
	return f
}

// startRx starts the trial's receive loops, one per queue, counting into
// t, on cpu when it is ≥ 0 (queueCPU).
func (p *xdpPort) startRx(t *rxTrial, cpu int) error {
	p.stats0 = make([]afxdp.Stats, len(p.xsks))
	for q, x := range p.xsks {
		s, err := x.Stats()
		if err != nil {
			return fmt.Errorf("%s queue %d: %w", p.where(), q, err)
		}
		p.stats0[q] = s
	}
	p.rxStop.Store(false)
	p.rxDones = make([]chan struct{}, len(p.xsks))
	for q, x := range p.xsks {
		p.rxDones[q] = make(chan struct{})
		go p.rxLoop(x, p.rxDones[q], t, queueCPU(cpu, q))
	}
	return nil
}

// queueCPU is the CPU of queue q's threads when queue 0's is cpu (−1: not
// pinned): the same. Config.TxCPU names the tester's CPU, and on a lab the
// others are the DUT's (lab State.TesterCPU): a second queue's sender put
// on the DUT's CPU of this 2-CPU lab fell 150–320 ms behind its schedule
// while the DUT forwarded (TestXDPSearchAccuracy at 2 queues, every trial of a
// search tester-limited). Unpinned (no TxCPU, e.g. a loop lab) the kernel
// spreads the queues' threads over the CPUs.
func queueCPU(cpu, q int) int { return cpu }

// rxLoop hands every frame socket x receives, with its kernel receive
// time, to the shared receiver (rxTrial.frame), until rxStop; the loops of
// a port's queues count a batch at a time under rxMu.
func (p *xdpPort) rxLoop(x *afxdp.Socket, done chan struct{}, t *rxTrial, cpu int) {
	defer close(done)
	nap := func() { time.Sleep(xdpNap) }
	if xdpRxBoost {
		// The loop's thread is locked and never unlocked: it ends with
		// the loop, and its priority and timer slack with it.
		runtime.LockOSThread()
		rxThread()
		ts := unix.NsecToTimespec(int64(xdpNap))
		nap = func() { _ = unix.Nanosleep(&ts, nil) }
	} else if cpu >= 0 {
		runtime.LockOSThread()
	}
	pinThread(cpu)
	frames := make([]afxdp.Frame, 256)
	for !p.rxStop.Load() {
		// Nap instead of poll when the ring is empty: a sleeper in poll
		// makes the kernel wake this thread for every frame, work done
		// on the CPU that forwards and sends (as the raw receiver does).
		n, err := x.Receive(frames, 0)
		if err != nil || n == 0 {
			nap()
			continue
		}
		p.rxMu.Lock()
		for _, f := range frames[:n] {
			t.frame(f.Data, len(f.Data), f.RxNs)
		}
		p.rxMu.Unlock()
	}
}

// xdpRxBoost gives the receive loop's thread the sending threads' priority
// (txNice) and a 1 ns timer slack, naps with nanosleep on it, and (unless
// Config.RxCPU says otherwise) runs it on the sender's CPU, off a lab DUT's.
// Measured on the 2-CPU lab at 64 B and 0.65-0.85 Mfps: the sender at nice
// −10 keeps its CPU ~95 % busy and the DUT's forwarding (with the veth's
// XDP receive into the socket) keeps the other ~97 % in softirq; the loop
// itself takes about 0.1-0.15 µs a frame (under 10 ticks of CPU per 1 s
// trial), but at nice 0 it waited for a CPU longer than its 16,384-frame
// ring lasts (25 ms at 650 kfps) and the socket dropped frames, a tester
// limit. BenchmarkXDPReceive64 compares both loops in one run; a variable
// so it can.
var xdpRxBoost = true

// rxThread sets the calling (locked) thread's priority to the sending
// threads' and its timer slack to 1 ns.
func rxThread() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), txNice)
}

// stopRx stops the receive loop and returns the frames the socket dropped
// during the trial (its RX ring full, no free fill chunk).
func (p *xdpPort) stopRx() (uint64, error) {
	if p.rxDones == nil {
		return 0, nil
	}
	p.rxStop.Store(true)
	for _, d := range p.rxDones {
		<-d
	}
	p.rxDones = nil
	var drops uint64
	for q, x := range p.xsks {
		s, err := x.Stats()
		if err != nil {
			return 0, fmt.Errorf("%s queue %d: %w", p.where(), q, err)
		}
		a := p.stats0[q]
		// The kernel counts a frame dropped for want of a fill chunk
		// twice (rx_dropped and rx_fill_ring_empty_descs): the larger.
		drops += (s.RxRingFull - a.RxRingFull) + max(s.RxDropped-a.RxDropped, s.FillRingEmpty-a.FillRingEmpty)
	}
	return drops, nil
}

func (p *xdpPort) close() error {
	p.stop.Store(true)
	<-p.done
	return p.closeSockets()
}

func (p *xdpPort) closeSockets() error {
	var errs []error
	errs = append(errs, afxdp.CloseQueues(p.xsks))
	if p.ctl != nil {
		errs = append(errs, p.ctl.Close())
	}
	return errors.Join(errs...)
}
