package trials

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sort"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
)

// PortConfig is one tester port of the raw transport. It is shaped like
// lab.Port so a caller maps a lab's state field by field.
type PortConfig struct {
	// Namespace is the network namespace holding Interface (as under
	// /run/netns); empty means the caller's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Interface is the port's interface name. Required.
	Interface string `json:"interface"`
	// Addr is the tester's own IPv4 address on this port with its prefix,
	// e.g. 198.18.1.2/24. The engine answers the DUT's ARP for it whether
	// or not the kernel has it configured. Required for IPv4 trials.
	Addr netip.Prefix `json:"addr"`
	// Gateway is the DUT's IPv4 address on this side (the next hop);
	// its MAC is learned by ARP. Required for IPv4 trials.
	Gateway netip.Addr `json:"gateway"`
	// Addr6 and Gateway6 are the same for IPv6 (learned by neighbor
	// discovery at the first IPv6 trial); both or neither. Needed only for
	// IPv6 trials.
	Addr6    netip.Prefix `json:"addr6,omitzero"`
	Gateway6 netip.Addr   `json:"gateway6,omitzero"`
	// TesterMAC is the Ethernet address the engine uses on this port for
	// test frames and ARP. Empty means a locally administered address
	// derived from the interface's (see emulatedMAC), unless
	// Config.UseInterfaceMAC.
	TesterMAC net.HardwareAddr `json:"tester_mac,omitempty"`
}

// emulatedMAC derives the tester's MAC on a port from the interface's:
// 02:25:44 (locally administered, unicast) and the interface's last three
// bytes. Like a hardware tester's emulated host, it keeps test frames out of
// the port's own kernel IP stack (they arrive as "other host" frames and
// only the engine's socket takes them), which on a one-box lab spares the
// forwarding CPU the stack's work.
func emulatedMAC(hw [6]byte) [6]byte {
	m := [6]byte{0x02, 0x25, 0x44, hw[3], hw[4], hw[5]}
	if m == hw {
		m[1] ^= 0xff
	}
	return m
}

// Config configures an Engine. The zero value of every optional field is
// a documented default.
type Config struct {
	// A and B are the two tester ports: A faces the DUT's input side
	// (198.18.0.0/16), B its output side (198.19.0.0/16).
	A PortConfig `json:"a"`
	B PortConfig `json:"b"`
	// CeilingFPS is the tester's calibrated ceiling in frames per second
	// per port, by frame size in bytes (from Calibrate). A trial whose
	// intended per-port rate is at or above the ceiling and which shows
	// loss is marked tester-limited. Sizes between calibrated sizes are
	// interpolated in bits per second. Nil means no ceiling is known.
	CeilingFPS map[int]float64 `json:"ceiling_fps,omitempty"`
	// MaxRateFPS is a safety cap on the intended rate of one port in
	// frames per second (RFC 6815); a trial above it is refused before any
	// frame is sent. Zero means no cap.
	MaxRateFPS float64 `json:"max_rate_fps,omitempty"`
	// ResolveTimeout bounds the ARP resolution of each gateway at Open and
	// during learning. Zero means 3 s.
	ResolveTimeout time.Duration `json:"resolve_timeout_ns,omitempty"`
	// TesterLimitTolerance is the fraction by which the offered load may
	// fall short of the intended load before the trial is marked
	// tester-limited. Zero means 0.01 (1 %).
	TesterLimitTolerance float64 `json:"tester_limit_tolerance,omitempty"`
	// AllowAnyDestination permits test addresses outside the benchmark
	// ranges 198.18.0.0/15 and 2001:2::/48 (RFC 6815). False refuses them.
	AllowAnyDestination bool `json:"allow_any_destination,omitempty"`
	// NoTxRing forces the plain sendto transmit path instead of
	// PACKET_TX_RING (for comparison and for kernels without it).
	NoTxRing bool `json:"no_tx_ring,omitempty"`
	// UseInterfaceMAC makes the engine use each interface's own MAC for test
	// frames and ARP instead of an emulated one, sharing the kernel's
	// identity (test frames then also climb the port's kernel IP stack).
	UseInterfaceMAC bool `json:"use_interface_mac,omitempty"`
	// QdiscPath sends through the port's qdisc (e.g. to shape on the tester
	// side) instead of bypassing it with PACKET_QDISC_BYPASS.
	QdiscPath bool `json:"qdisc_path,omitempty"`
	// TxCPU and RxCPU pin the transmit threads and the receive loops to
	// CPU TxCPU−1 and RxCPU−1 (1-based so the zero value means "not
	// pinned"). On a small box, transmit (and, on a veth lab, the DUT's
	// forwarding in its softirq) on one CPU and receive on another avoids
	// the two trading places.
	TxCPU int `json:"tx_cpu,omitempty"`
	RxCPU int `json:"rx_cpu,omitempty"`
	// MaxLag is how far the generator may fall behind its schedule before
	// a lossy trial is marked tester-limited, when the catch-up burst
	// (lag × rate frames) is large enough to explain all the loss. Zero
	// means 2 ms.
	MaxLag time.Duration `json:"max_lag_ns,omitempty"`
	// Batch is the most frames handed to the kernel per transmit call at
	// full speed (unpaced bursts, calibration); paced streams use at most
	// 32. Zero means 256.
	Batch int `json:"batch,omitempty"`
	// Queues is the number of queues per port the xdp transport uses (one
	// AF_XDP socket and one sending thread per queue, XDPEngine); 0 means
	// 1. The raw transport uses one.
	Queues int `json:"queues,omitempty"`
	// XDPStamp picks where the xdp transport's XDP program writes each
	// frame's receive time: "metadata", "head" (in front of the frame, for
	// kernels that refuse bpf_xdp_adjust_meta) or "user" (the receiver's
	// clock when it reads the ring). Empty means the first the kernel
	// takes, in that order; Paths.Timestamps says which ran and
	// Paths.Fallback why. Tests force each.
	XDPStamp string `json:"xdp_stamp,omitempty"`
}

// Defaults.
const (
	DefaultResolveTimeout       = 3 * time.Second
	DefaultTesterLimitTolerance = 0.01
	DefaultBatch                = 256
	DefaultMaxLag               = 2 * time.Millisecond
	// LateGrace is how long the receiver keeps counting frames after the
	// settle wait, to report them late (they count as lost).
	LateGrace = 100 * time.Millisecond
)

func (c Config) withDefaults() Config {
	if c.ResolveTimeout <= 0 {
		c.ResolveTimeout = DefaultResolveTimeout
	}
	c.TesterLimitTolerance, c.MaxLag = limitDefaults(c.TesterLimitTolerance, c.MaxLag)
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	return c
}

// Validate checks c; the error names the field, the value and the fix.
func (c Config) Validate() error {
	for _, p := range []struct {
		name string
		pc   PortConfig
	}{{"a", c.A}, {"b", c.B}} {
		if err := p.pc.validate(p.name, c.AllowAnyDestination); err != nil {
			return err
		}
	}
	if c.A.Namespace == c.B.Namespace && c.A.Interface == c.B.Interface {
		return fmt.Errorf("port b interface %q: same as port a; give two different ports", c.B.Interface)
	}
	if err := validateLimits("", c.MaxRateFPS, c.TesterLimitTolerance); err != nil {
		return err
	}
	for size, fps := range c.CeilingFPS {
		if size <= 0 || fps <= 0 {
			return fmt.Errorf("ceiling_fps[%d] = %g: want positive frame sizes and rates (run 'rfc2544 calibrate')", size, fps)
		}
	}
	if c.Queues < 0 {
		return fmt.Errorf("queues %d (--queues): want 1 or more (0: one queue)", c.Queues)
	}
	if _, err := afxdp.ParseStamp(c.XDPStamp); err != nil {
		return fmt.Errorf("xdp_stamp %q: want empty (the first the kernel takes), metadata, head or user", c.XDPStamp)
	}
	if c.Batch < 0 || c.Batch > 4096 {
		return fmt.Errorf("batch %d: want 0 (default %d) to 4096", c.Batch, DefaultBatch)
	}
	return nil
}

func (p PortConfig) validate(name string, anyDst bool) error {
	if p.Interface == "" {
		return fmt.Errorf("port %s interface: not set; give the tester port's interface name, e.g. a0", name)
	}
	if !p.Addr.IsValid() || !p.Addr.Addr().Is4() {
		return fmt.Errorf("port %s addr %q: want the tester's IPv4 address with prefix, e.g. 198.18.1.2/24", name, p.Addr)
	}
	if !p.Gateway.IsValid() || !p.Gateway.Is4() {
		return fmt.Errorf("port %s gateway %q: want the DUT's IPv4 address on this side, e.g. 198.18.1.1", name, p.Gateway)
	}
	if !anyDst && (!benchNet4.Contains(p.Addr.Addr()) || !benchNet4.Contains(p.Gateway)) {
		return fmt.Errorf("port %s addresses %v via %v: outside the benchmark range %v (RFC 6815): use test addresses, or set allow_any_destination if this network is yours to load",
			name, p.Addr.Addr(), p.Gateway, benchNet4)
	}
	if p.Addr6.IsValid() != p.Gateway6.IsValid() {
		return fmt.Errorf("port %s addr6 %v and gateway6 %v: give both (IPv6 trials) or neither", name, p.Addr6, p.Gateway6)
	}
	if p.Addr6.IsValid() && (!p.Addr6.Addr().Is6() || p.Addr6.Addr().Is4In6() || !p.Gateway6.Is6()) {
		return fmt.Errorf("port %s addr6 %v via %v: want IPv6 addresses, e.g. 2001:2:0:1::2/64 via 2001:2:0:1::1", name, p.Addr6, p.Gateway6)
	}
	if p.Addr6.IsValid() && !anyDst && (!benchNet6.Contains(p.Addr6.Addr()) || !benchNet6.Contains(p.Gateway6)) {
		return fmt.Errorf("port %s addr6 %v via %v: outside the benchmark range %v (RFC 6815)", name, p.Addr6, p.Gateway6, benchNet6)
	}
	return nil
}

// ceilingFor returns the calibrated ceiling for frame size f in frames per
// second, interpolating linearly in bits per second between the nearest
// calibrated sizes; 0 when unknown.
func ceilingFor(c map[int]float64, f int) float64 {
	if len(c) == 0 {
		return 0
	}
	if v, ok := c[f]; ok {
		return v
	}
	sizes := make([]int, 0, len(c))
	for s := range c {
		sizes = append(sizes, s)
	}
	sort.Ints(sizes)
	if f < sizes[0] || f > sizes[len(sizes)-1] {
		return 0 // no extrapolation
	}
	i := sort.SearchInts(sizes, f)
	lo, hi := sizes[i-1], sizes[i]
	blo, bhi := c[lo]*float64(lo), c[hi]*float64(hi)
	b := blo + (bhi-blo)*float64(f-lo)/float64(hi-lo)
	return b / float64(f)
}

// ceilingReasons says why a trial is tester-limited by the calibrated
// ceiling: it showed loss while a port's intended load (fps, A then B) was at
// or above the tester's ceiling for the frame size, less the tolerance.
func ceilingReasons(ceiling map[int]float64, frameSize int, loads [2]float64, lossPercent, tol float64) []string {
	c := ceilingFor(ceiling, frameSize)
	if c <= 0 || lossPercent <= 0 {
		return nil
	}
	var r []string
	for i, load := range loads {
		if load > 0 && load >= c*(1-tol) {
			r = append(r, fmt.Sprintf("port %s: intended %.0f fps is at or above the tester's calibrated ceiling %.0f fps at %d bytes",
				[]string{"A", "B"}[i], load, c, frameSize))
		}
	}
	return r
}

// GenConfig is a generator-only run on one interface (no receiver, no ARP):
// the `rfc2544 gen` benchmark mode and a tool for calibrating peers.
type GenConfig struct {
	// Namespace and Interface are where frames are sent.
	Namespace string
	Interface string
	// DstMAC is the frames' destination MAC. Required.
	DstMAC net.HardwareAddr
	// SrcIP and DstIP are the frames' addresses (benchmark ranges only,
	// unless AllowAnyDestination).
	SrcIP, DstIP netip.Addr
	// DstPort is the UDP destination port; zero means 7.
	DstPort uint16
	// FrameSize is the RFC 2544 frame size in bytes (FCS included).
	FrameSize int
	// RateFPS is the intended rate; zero means as fast as possible.
	RateFPS float64
	// Duration is how long to send. Required.
	Duration time.Duration
	// AllowAnyDestination lifts the RFC 6815 address check.
	AllowAnyDestination bool
	// NoTxRing forces the sendto path.
	NoTxRing bool
	// QdiscPath sends through the qdisc instead of bypassing it.
	QdiscPath bool
	// Batch is the most frames per transmit call; zero means 256.
	Batch int
	// Queues is the number of sending threads, each with its own socket
	// (xdp: bound to queue q of the interface; raw: the kernel picks the
	// queue by the flow, source port DefaultSrcPort+q) and pinned to the
	// q-th CPU the process may use (its affinity), at 1/Queues of the
	// rate; zero means 1. At most one per such CPU.
	Queues int
}

// check validates c for Generate and GenerateXDP, before anything is
// opened, and fills in the default batch.
func (c *GenConfig) check() error {
	if c.Duration <= 0 {
		return fmt.Errorf("gen duration %v: must be positive, e.g. 5s", c.Duration)
	}
	if c.RateFPS < 0 {
		return fmt.Errorf("gen rate %g: must be 0 (full speed) or positive", c.RateFPS)
	}
	if len(c.DstMAC) != 6 {
		return fmt.Errorf("gen dst mac %q: want a 6-byte MAC", c.DstMAC)
	}
	if !c.AllowAnyDestination && (!benchNet4.Contains(c.DstIP) || !benchNet4.Contains(c.SrcIP)) {
		return fmt.Errorf("gen addresses %v -> %v: outside %v (RFC 6815)", c.SrcIP, c.DstIP, benchNet4)
	}
	if c.Queues < 0 || c.Queues > runtime.NumCPU() {
		return fmt.Errorf("gen queues %d: want 1 to %d (the CPUs this process may run on: each queue's sending thread needs its own)", c.Queues, runtime.NumCPU())
	}
	if c.Queues == 0 {
		c.Queues = 1
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	return nil
}

// GenResult is what Generate sent.
type GenResult struct {
	// Sent counts frames the kernel accepted; Failed those it refused.
	Sent, Failed uint64
	// Seconds is the time from the first to the last frame sent.
	Seconds float64
	// OfferedFPS is (Sent−1)/Seconds; with several queues, the sum of
	// theirs (each over its own first to last frame).
	OfferedFPS float64
	// Paths are the kernel paths used.
	Paths Paths
	// Queues is the number of queues that sent (GenConfig.Queues).
	Queues int
}

// CalibrationPoint is the tester's ceiling at one frame size, measured on a
// loop (port A cabled to port B, no DUT).
type CalibrationPoint struct {
	// FrameSize is the RFC 2544 frame size in bytes.
	FrameSize int `json:"frame_size"`
	// OfferedFPS is what the generator handed to the kernel at full speed.
	OfferedFPS float64 `json:"offered_fps"`
	// ReceivedFPS is what the receiver counted over the same time.
	ReceivedFPS float64 `json:"received_fps"`
	// KernelDrops counts frames the receiving socket dropped.
	KernelDrops uint64 `json:"kernel_drops"`
	// CeilingFPS is the tester's ceiling: the lower of offered and
	// received rates, so the engine flags trials at or above it.
	CeilingFPS float64 `json:"ceiling_fps"`
	// Paths are the kernel paths measured.
	Paths Paths `json:"paths"`
}

// CeilingMap turns calibration points into Config.CeilingFPS.
func CeilingMap(pts []CalibrationPoint) map[int]float64 {
	m := map[int]float64{}
	for _, p := range pts {
		if p.CeilingFPS > 0 {
			m[p.FrameSize] = p.CeilingFPS
		}
	}
	return m
}
