package lab

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"runtime"
	"time"

	"github.com/rfc2544/rfc2544/internal/benchnet"
	"github.com/rfc2544/rfc2544/internal/netdev"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// lockLab takes the lab's exclusive lock file, so that Up and Down of one
// name never interleave. It returns the unlock function.
func lockLab(name string) (func(), error) {
	if err := os.MkdirAll(stateDir(), 0o755); err != nil {
		return nil, fmt.Errorf("create lab state directory: %w", err)
	}
	f, err := os.OpenFile(lockPath(name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lab lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lab %q is busy: another 'lab up' or 'lab down' of it is running", name)
		}
		return nil, fmt.Errorf("lock lab %q: %w", name, err)
	}
	return func() { f.Close() }, nil
}

func up(ctx context.Context, cfg Config) (st *State, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	feat, err := probeFeatures()
	if err != nil {
		return nil, err
	}
	if err := checkFeatures(cfg, feat); err != nil {
		return nil, err
	}
	unlock, err := lockLab(cfg.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(statePath(cfg.Name)); err == nil {
		return nil, fmt.Errorf("lab name %q is already in use: pick another --name or run 'rfc2544 lab down --name %s': %w", cfg.Name, cfg.Name, ErrInUse)
	}
	// No state but we hold the lock: anything left under this lab's names
	// is the debris of an Up that was killed. Clear it.
	if err := teardown(cfg.Name, nil); err != nil {
		return nil, fmt.Errorf("clear leftovers of lab %q: %w", cfg.Name, err)
	}
	defer func() {
		if err != nil {
			if terr := teardown(cfg.Name, st); terr != nil {
				err = fmt.Errorf("%w (and cleaning up failed: %v)", err, terr)
			} else {
				os.Remove(lockPath(cfg.Name))
			}
			st = nil
		}
	}()
	st = &State{Name: cfg.Name, Topology: cfg.Topology, DUT: cfg.DUT, Config: cfg, Features: feat}
	if cfg.Topology == TopologyLoop {
		err = buildLoop(st)
	} else {
		err = buildRouter(ctx, st)
	}
	if err != nil {
		return st, err
	}
	if err = ctx.Err(); err != nil {
		return st, fmt.Errorf("lab up: %w", err)
	}
	st.Created = time.Now().UTC()
	if err = st.save(); err != nil {
		return st, err
	}
	return st, nil
}

// checkFeatures names a missing kernel feature the configuration needs.
func checkFeatures(cfg Config, f Features) error {
	if cfg.Topology == TopologyLoop || cfg.DUT == DUTRelay {
		return nil
	}
	if (cfg.Delay > 0 || cfg.Jitter > 0) && !f.Netem {
		return fmt.Errorf("--delay/--jitter with the kernel DUT need the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM): use --dut relay, which applies delay and jitter in user space: %w", ErrNotSupported)
	}
	if (cfg.AtoB.RateBps > 0 || cfg.BtoA.RateBps > 0) && !f.Tbf {
		return fmt.Errorf("--rate needs the tbf qdisc, which this kernel lacks (CONFIG_NET_SCH_TBF): %w", ErrNotSupported)
	}
	if (cfg.AtoB.LossPercent > 0 || cfg.BtoA.LossPercent > 0 || cfg.FWRules > 0 || cfg.FWSet > 0 || cfg.FWStateful) && !f.Nftables {
		return fmt.Errorf("--loss, --fw-rules, --fw-set and --fw-stateful need nftables, which this kernel lacks (CONFIG_NF_TABLES, CONFIG_NFT_NUMGEN): use --dut relay for loss: %w", ErrNotSupported)
	}
	return nil
}

// nsSet holds open handles of a lab's namespaces. Make it with newNSSet:
// the zero NsHandle is fd 0, which close would shut.
type nsSet struct {
	a, dut, b netns.NsHandle
}

func newNSSet() nsSet { return nsSet{a: netns.None(), dut: netns.None(), b: netns.None()} }

func (s *nsSet) close() {
	for _, h := range []*netns.NsHandle{&s.a, &s.dut, &s.b} {
		if h.IsOpen() {
			h.Close()
		}
	}
}

// baseSysctls apply to every lab namespace: addresses usable at once (no
// DAD), no router advertisements.
var baseSysctls = [][2]string{
	{"net/ipv6/conf/all/accept_dad", "0"},
	{"net/ipv6/conf/default/accept_dad", "0"},
	{"net/ipv6/conf/all/accept_ra", "0"},
	{"net/ipv6/conf/default/accept_ra", "0"},
}

func buildRouter(ctx context.Context, st *State) error {
	cfg := st.Config
	nsA, nsDUT, nsB := Namespaces(st.Name)
	ns := newNSSet()
	defer ns.close()
	var err error
	for _, n := range []struct {
		name string
		h    *netns.NsHandle
	}{{nsA, &ns.a}, {nsDUT, &ns.dut}, {nsB, &ns.b}} {
		if *n.h, err = createNS(n.name); err != nil {
			return err
		}
		if err := writeSysctls(n.name, baseSysctls); err != nil {
			return err
		}
	}
	fwd := "1"
	if cfg.DUT == DUTRelay {
		fwd = "0" // the relay forwards; the kernel only answers ARP/ND
	}
	if err := writeSysctls(nsDUT, [][2]string{
		{"net/ipv4/ip_forward", fwd},
		{"net/ipv6/conf/all/forwarding", fwd},
	}); err != nil {
		return err
	}
	hd, err := netlink.NewHandleAt(ns.dut)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", nsDUT, err)
	}
	defer hd.Close()
	for _, v := range []struct {
		name, peer string
		peerNS     netns.NsHandle
		mtu        int
	}{{ifDutA, ifA, ns.a, cfg.MTUA}, {ifDutB, ifB, ns.b, cfg.MTUB}} {
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: v.name, MTU: v.mtu, TxQLen: -1, NumTxQueues: cfg.Queues, NumRxQueues: cfg.Queues},
			PeerName:      v.peer,
			PeerNamespace: netlink.NsFd(int(v.peerNS)),
			PeerMTU:       uint32(v.mtu),
		}
		if err := hd.LinkAdd(veth); err != nil {
			return fmt.Errorf("create veth %s (%s) - %s (%s): %w", v.name, nsDUT, v.peer, nsA, err)
		}
	}
	dutA, err := setupLink(hd, ifDutA, addrDutA4, addrDutA6)
	if err != nil {
		return err
	}
	dutB, err := setupLink(hd, ifDutB, addrDutB4, addrDutB6)
	if err != nil {
		return err
	}
	if err := setupLo(hd); err != nil {
		return err
	}
	st.DUTNamespace = nsDUT
	st.DUTA = DUTPort{Interface: ifDutA, MAC: dutA.HardwareAddr.String(), IPv4: addrDutA4, IPv6: addrDutA6, MTU: cfg.MTUA}
	st.DUTB = DUTPort{Interface: ifDutB, MAC: dutB.HardwareAddr.String(), IPv4: addrDutB4, IPv6: addrDutB6, MTU: cfg.MTUB}

	st.A, err = setupTester(ns.a, nsA, ifA, addrA4, addrA6, addrDutA4.Addr(), addrDutA6.Addr(), cfg.MTUA, true)
	if err != nil {
		return err
	}
	st.A.PeerMAC = dutA.HardwareAddr
	st.B, err = setupTester(ns.b, nsB, ifB, addrB4, addrB6, addrDutB4.Addr(), addrDutB6.Addr(), cfg.MTUB, true)
	if err != nil {
		return err
	}
	st.B.PeerMAC = dutB.HardwareAddr

	if !cfg.NoRPS && runtime.NumCPU() > 1 {
		cpus := []int{runtime.NumCPU() - 1}
		if err := setRPS(nsDUT, []string{ifDutA, ifDutB}, cpus); err != nil {
			return err
		}
		st.DUTCPUs = cpus
		// The tester ports' receive work goes to the other CPUs, so
		// frames the DUT forwarded do not compete with its own input
		// for the DUT CPU's backlog.
		var others []int
		for c := range runtime.NumCPU() - 1 {
			others = append(others, c)
		}
		if err := setRPS(nsA, []string{ifA}, others); err != nil {
			return err
		}
		if err := setRPS(nsB, []string{ifB}, others); err != nil {
			return err
		}
	}
	if cfg.DUT == DUTRelay {
		return startRelay(ctx, st)
	}
	if !cfg.DUTBackpressure {
		if err := addTesterQdiscs(st); err != nil {
			return err
		}
		st.TesterQdisc = true
	}
	if err := applyQdiscs(hd, nsDUT, cfg); err != nil {
		return err
	}
	return applyNftables(ns.dut, cfg)
}

func buildLoop(st *State) error {
	cfg := st.Config
	nsA, _, nsB := Namespaces(st.Name)
	ns := newNSSet()
	defer ns.close()
	var err error
	for _, n := range []struct {
		name string
		h    *netns.NsHandle
	}{{nsA, &ns.a}, {nsB, &ns.b}} {
		if *n.h, err = createNS(n.name); err != nil {
			return err
		}
		if err := writeSysctls(n.name, baseSysctls); err != nil {
			return err
		}
	}
	ha, err := netlink.NewHandleAt(ns.a)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", nsA, err)
	}
	defer ha.Close()
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: ifA, MTU: cfg.MTUA, TxQLen: -1, NumTxQueues: cfg.Queues, NumRxQueues: cfg.Queues},
		PeerName:      ifB,
		PeerNamespace: netlink.NsFd(int(ns.b)),
		PeerMTU:       uint32(cfg.MTUA),
	}
	if err := ha.LinkAdd(veth); err != nil {
		return fmt.Errorf("create veth %s (%s) - %s (%s): %w", ifA, nsA, ifB, nsB, err)
	}
	if st.A, err = setupTester(ns.a, nsA, ifA, addrA4, addrA6, addrLoopB4.Addr(), addrLoopB6.Addr(), cfg.MTUA, false); err != nil {
		return err
	}
	if st.B, err = setupTester(ns.b, nsB, ifB, addrLoopB4, addrLoopB6, addrA4.Addr(), addrA6.Addr(), cfg.MTUA, false); err != nil {
		return err
	}
	st.A.PeerMAC, st.B.PeerMAC = st.B.MAC, st.A.MAC
	return nil
}

// setupLink adds the addresses to the named link and brings it up.
func setupLink(h *netlink.Handle, name string, v4, v6 netip.Prefix) (*netlink.LinkAttrs, error) {
	l, err := h.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("find link %s: %w", name, err)
	}
	for _, p := range []netip.Prefix{v4, v6} {
		a := &netlink.Addr{IPNet: prefixToIPNet(p), Flags: unix.IFA_F_NODAD}
		if err := h.AddrAdd(l, a); err != nil {
			return nil, fmt.Errorf("add address %s to %s: %w", p, name, err)
		}
	}
	if err := h.LinkSetUp(l); err != nil {
		return nil, fmt.Errorf("bring up %s: %w", name, err)
	}
	return l.Attrs(), nil
}

func setupLo(h *netlink.Handle) error {
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("find loopback: %w", err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	return nil
}

// setupTester configures a tester port: addresses, link up, loopback up and
// (when routed) routes for the test ranges 198.18.0.0/15 and 2001:2::/48
// via gw.
func setupTester(nsh netns.NsHandle, nsName, ifname string, v4, v6 netip.Prefix, gw4, gw6 netip.Addr, mtu int, routed bool) (Port, error) {
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		return Port{}, fmt.Errorf("netlink in %s: %w", nsName, err)
	}
	defer h.Close()
	la, err := setupLink(h, ifname, v4, v6)
	if err != nil {
		return Port{}, err
	}
	if err := netdev.DisableOffloads(nsName, ifname); err != nil {
		return Port{}, err
	}
	if err := setupLo(h); err != nil {
		return Port{}, err
	}
	// The tester ports route the benchmark blocks (the test traffic) via the DUT.
	for _, dst := range benchnet.Prefixes() {
		if !routed {
			break // loop topology: the other port is on-link
		}
		gw := gw4
		if dst.Addr().Is6() {
			gw = gw6
		}
		route := &netlink.Route{LinkIndex: la.Index, Dst: prefixToIPNet(dst), Gw: net.IP(gw.AsSlice())}
		if err := h.RouteAdd(route); err != nil {
			return Port{}, fmt.Errorf("add route %s via %s in %s: %w", dst, gw, nsName, err)
		}
	}
	return Port{
		Namespace: nsName, Interface: ifname, MAC: la.HardwareAddr,
		IPv4: v4, IPv6: v6, GatewayV4: gw4, GatewayV6: gw6, MTU: mtu,
	}, nil
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	bits := 32
	if p.Addr().Is6() {
		bits = 128
	}
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}

func down(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if err := checkPrivileges(); err != nil {
		return err
	}
	unlock, err := lockLab(name)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := Load(name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		st = nil // corrupt state: fall back to the derived names
	}
	if err := teardown(name, st); err != nil {
		return err
	}
	if err := os.Remove(lockPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove lab lock: %w", err)
	}
	return nil
}

// teardown removes everything a lab called name may have created: its
// relay process, its namespaces (which takes their links, qdiscs and
// nftables with them) and its files. st may be nil. It touches only names
// derived from the lab name and a relay process that carries the lab's
// marker.
func teardown(name string, st *State) error {
	var errs []error
	if err := stopRelay(name, st); err != nil {
		errs = append(errs, err)
	}
	a, dut, b := Namespaces(name)
	for _, n := range []string{a, dut, b} {
		if err := deleteNS(n); err != nil {
			errs = append(errs, err)
		}
	}
	for _, p := range []string{statePath(name), statePath(name) + ".tmp", relayPIDPath(name), relaySockPath(name), relayLogPath(name)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// testerQLen is the tester ports' transmit queue (pfifo) in packets.
const testerQLen = 10000

// addTesterQdiscs gives the tester ports a0 and b0 a root pfifo, their
// "NIC transmit queue". A sender that goes through it (trials
// Config.QdiscPath) hands each frame to the queue, and the queue's dequeue
// hands it to the veth: when an overrun DUT's backlog drops it there, the
// drop ends at the queue (as on a wire) instead of being returned to the
// sender's transmit call, which PACKET_TX_RING would answer by sending the
// frame again (back-pressure). See State.TesterQdisc.
func addTesterQdiscs(st *State) error {
	for _, p := range []Port{st.A, st.B} {
		h, err := netns.GetFromName(p.Namespace)
		if err != nil {
			return fmt.Errorf("open namespace %s: %w", p.Namespace, err)
		}
		hl, err := netlink.NewHandleAt(h)
		h.Close()
		if err != nil {
			return fmt.Errorf("netlink in %s: %w", p.Namespace, err)
		}
		l, err := hl.LinkByName(p.Interface)
		hl.Close()
		if err != nil {
			return fmt.Errorf("find %s in %s: %w", p.Interface, p.Namespace, err)
		}
		if err := addPfifo(p.Namespace, l.Attrs().Index, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, testerQLen); err != nil {
			return fmt.Errorf("add transmit queue (pfifo) to tester port %s in %s: %w", p.Interface, p.Namespace, err)
		}
	}
	return nil
}
