package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/rate"
)

// Topology is the shape of a lab.
type Topology int

// Topologies. The zero value means TopologyRouter.
const (
	// TopologyRouter is A ↔ DUT ↔ B: two veth pairs and a DUT namespace
	// that forwards between them.
	TopologyRouter Topology = iota + 1
	// TopologyLoop is A ↔ B: one veth pair and no DUT, for measuring the
	// tester's own ceiling.
	TopologyLoop
)

// String returns "router" or "loop".
func (t Topology) String() string {
	switch t {
	case TopologyRouter, 0:
		return "router"
	case TopologyLoop:
		return "loop"
	}
	return fmt.Sprintf("Topology(%d)", int(t))
}

// ParseTopology parses "router" or "loop".
func ParseTopology(s string) (Topology, error) {
	switch strings.ToLower(s) {
	case "router", "":
		return TopologyRouter, nil
	case "loop":
		return TopologyLoop, nil
	}
	return 0, fmt.Errorf("invalid topology %q: use router or loop", s)
}

// MarshalText implements encoding.TextMarshaler.
func (t Topology) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Topology) UnmarshalText(b []byte) error {
	v, err := ParseTopology(string(b))
	*t = v
	return err
}

// DUTKind is the kind of device under test in a router topology.
type DUTKind int

// DUT kinds. The zero value means DUTKernel.
const (
	// DUTKernel is the Linux kernel's IP forwarding, shaped with tc
	// qdiscs and filtered with nftables.
	DUTKernel DUTKind = iota + 1
	// DUTRelay is a user-space forwarder (a background process) that
	// applies exact delay, jitter, loss, reordering and duplication.
	DUTRelay
)

// String returns "kernel" or "relay".
func (d DUTKind) String() string {
	switch d {
	case DUTKernel, 0:
		return "kernel"
	case DUTRelay:
		return "relay"
	}
	return fmt.Sprintf("DUTKind(%d)", int(d))
}

// ParseDUTKind parses "kernel" or "relay".
func ParseDUTKind(s string) (DUTKind, error) {
	switch strings.ToLower(s) {
	case "kernel", "":
		return DUTKernel, nil
	case "relay":
		return DUTRelay, nil
	}
	return 0, fmt.Errorf("invalid dut %q: use kernel or relay", s)
}

// MarshalText implements encoding.TextMarshaler.
func (d DUTKind) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DUTKind) UnmarshalText(b []byte) error {
	v, err := ParseDUTKind(string(b))
	*d = v
	return err
}

// Shaping is the kernel DUT's egress treatment of one direction of traffic,
// applied on the DUT port that faces the receiving side.
type Shaping struct {
	// RateBps is the shaped rate in bits per second (IP packet plus
	// Ethernet header, as tc counts). Zero means not shaped.
	RateBps uint64 `json:"rate_bps,omitempty"`
	// BurstBytes is the token bucket depth in bytes. Zero means the
	// default: the larger of 10 ms at RateBps and two full frames.
	BurstBytes uint32 `json:"burst_bytes,omitempty"`
	// LimitPackets is the queue length in packets. Zero means the default
	// of 1000 packets when RateBps is set, and no queue otherwise.
	LimitPackets uint32 `json:"limit_packets,omitempty"`
	// LossPercent is the random drop probability in percent (0–100),
	// applied in the DUT's nftables forward chain with a resolution of
	// 0.01 points. Zero means no loss.
	LossPercent float64 `json:"loss_percent,omitempty"`
}

// Config describes a lab. The zero value (with a Name) is a router
// topology with a kernel DUT, 1500-byte MTUs and no shaping.
type Config struct {
	// Name identifies the lab: 1–24 characters of a-z, 0-9 and '-',
	// starting with a letter or digit. Namespaces are named
	// r2544-NAME-a, r2544-NAME-dut and r2544-NAME-b.
	Name string `json:"name"`
	// Topology is router (the default) or loop.
	Topology Topology `json:"topology"`
	// DUT is kernel (the default) or relay; only for the router topology.
	DUT DUTKind `json:"dut"`
	// AtoB and BtoA shape the kernel DUT's two directions.
	AtoB Shaping `json:"a_to_b"`
	BtoA Shaping `json:"b_to_a"`
	// FWRules is the number of non-matching rules the kernel DUT's
	// nftables forward chain evaluates before accepting a packet, so the
	// per-packet cost grows with it (the "certify a firewall" case).
	FWRules int `json:"fw_rules,omitempty"`
	// FWStateful makes the forward chain a stateful rule base (conntrack):
	// "ct state established,related accept" and "ct state invalid drop"
	// first, the FWRules after them, new flows between test addresses
	// accepted by an explicit rule, and a drop policy. Unidirectional UDP
	// test flows never see a reply, so conntrack keeps them new and every
	// frame walks the rule base. False means no conntrack rules.
	FWStateful bool `json:"fw_stateful,omitempty"`
	// FWSet is the number of addresses in an nftables set that every
	// packet's source is looked up in once (a hash lookup, as real rule
	// bases hold block lists). Zero means no set.
	FWSet int `json:"fw_set,omitempty"`
	// MTUA and MTUB are the IP MTUs, in bytes, of the A-side and B-side
	// links (the tester port and the DUT port facing it). Zero means
	// 1500. Valid: 1280–65535.
	MTUA int `json:"mtu_a"`
	MTUB int `json:"mtu_b"`
	// Delay and Jitter are kernel-DUT netem settings for both directions;
	// they need a kernel with CONFIG_NET_SCH_NETEM. With the relay DUT
	// they are copied into Relay.Delay and Relay.Jitter.
	Delay  time.Duration `json:"delay_ns,omitempty"`
	Jitter time.Duration `json:"jitter_ns,omitempty"`
	// Relay configures the relay DUT.
	Relay RelayConfig `json:"relay,omitzero"`
	// NoRPS disables steering the DUT's ingress to its own CPU. By
	// default, on a box with more than one CPU, the DUT's receive
	// processing runs on the last CPU so an overrun DUT drops frames (as
	// hardware does) instead of slowing the sender.
	NoRPS bool `json:"no_rps,omitempty"`
	// DUTBackpressure leaves the tester ports without a transmit queue, so
	// a frame goes straight from the sender into the veth and a drop at
	// the overrun kernel DUT's full backlog is returned to the sending
	// socket, which (PACKET_TX_RING) sends it again: the DUT holds the
	// tester back, as Ethernet flow control would, instead of dropping.
	// False (the default) gives the tester ports a queue (State.TesterQdisc)
	// that ends such drops, so the DUT drops like an appliance.
	DUTBackpressure bool `json:"dut_backpressure,omitempty"`
	// Queues is the number of transmit and receive queues of every lab
	// veth (tester ports and the DUT's); zero means the kernel's default,
	// one. The xdp transport's --queues N needs N here.
	Queues int `json:"queues,omitempty"`
}

// Limits of the lab's settings.
const (
	MinMTU      = 1280
	MaxMTU      = 65535
	DefaultMTU  = 1500
	maxNameLen  = 24
	maxFWRules  = 100000
	maxQueues   = 64
	maxFWSet    = 1 << 20
	defaultQLen = 1000
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ValidateName checks a lab name.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("lab name is empty: give --name, e.g. --name demo")
	}
	if len(name) > maxNameLen || !nameRE.MatchString(name) {
		return fmt.Errorf("invalid lab name %q: use 1-%d characters of a-z, 0-9 and '-', starting with a letter or digit, e.g. demo-1", name, maxNameLen)
	}
	return nil
}

// withDefaults returns c with zero values replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.Topology == 0 {
		c.Topology = TopologyRouter
	}
	if c.DUT == 0 {
		c.DUT = DUTKernel
	}
	if c.MTUA == 0 {
		c.MTUA = DefaultMTU
	}
	if c.MTUB == 0 {
		c.MTUB = DefaultMTU
	}
	if c.DUT == DUTRelay {
		if c.Relay.Delay == 0 {
			c.Relay.Delay = c.Delay
		}
		if c.Relay.Jitter == 0 {
			c.Relay.Jitter = c.Jitter
		}
		if c.Relay.LossPercent == 0 && c.AtoB.LossPercent == c.BtoA.LossPercent {
			c.Relay.LossPercent = c.AtoB.LossPercent
		}
		c.Delay, c.Jitter = 0, 0
		c.AtoB.LossPercent, c.BtoA.LossPercent = 0, 0
		// The relay shapes in user space (relay.Settings): no tbf.
		if c.Relay.RateABBps == 0 && c.Relay.RateBABps == 0 {
			c.Relay.RateABBps, c.Relay.RateBABps = c.AtoB.RateBps, c.BtoA.RateBps
		}
		if c.Relay.LimitPackets == 0 {
			c.Relay.LimitPackets = int(c.AtoB.LimitPackets)
		}
		c.AtoB.RateBps, c.BtoA.RateBps, c.AtoB.LimitPackets, c.BtoA.LimitPackets = 0, 0, 0, 0
		if c.Relay.ReorderPercent > 0 && c.Relay.ReorderGap == 0 {
			c.Relay.ReorderGap = time.Millisecond
		}
	}
	for _, s := range []*Shaping{&c.AtoB, &c.BtoA} {
		if s.RateBps > 0 && s.LimitPackets == 0 {
			s.LimitPackets = defaultQLen
		}
	}
	return c
}

// Validate checks every setting and returns an error naming the first bad
// field, its value and an example of a good one. It creates nothing.
func (c Config) Validate() error {
	if err := ValidateName(c.Name); err != nil {
		return err
	}
	switch c.Topology {
	case 0, TopologyRouter, TopologyLoop:
	default:
		return fmt.Errorf("invalid topology %v: use router or loop", c.Topology)
	}
	switch c.DUT {
	case 0, DUTKernel, DUTRelay:
	default:
		return fmt.Errorf("invalid dut %v: use kernel or relay", c.DUT)
	}
	for _, m := range []struct {
		field string
		v     int
	}{{"mtu-a", c.MTUA}, {"mtu-b", c.MTUB}} {
		if m.v != 0 && (m.v < MinMTU || m.v > MaxMTU) {
			return fmt.Errorf("invalid %s %d: use %d-%d bytes, e.g. 1500 or 9000", m.field, m.v, MinMTU, MaxMTU)
		}
	}
	for _, s := range []struct {
		dir string
		s   Shaping
	}{{"ab", c.AtoB}, {"ba", c.BtoA}} {
		if err := checkPercent("loss-"+s.dir, s.s.LossPercent); err != nil {
			return err
		}
		if s.s.RateBps != 0 && s.s.RateBps < 8000 {
			return fmt.Errorf("invalid rate-%s %d bit/s: use at least 8kbit, e.g. 50mbit", s.dir, s.s.RateBps)
		}
		if s.s.LimitPackets > 1<<20 {
			return fmt.Errorf("invalid limit-%s %d packets: use 1-%d, e.g. 1000", s.dir, s.s.LimitPackets, 1<<20)
		}
		mtu := c.MTUB
		if s.dir == "ba" {
			mtu = c.MTUA
		}
		if mtu == 0 {
			mtu = DefaultMTU
		}
		if s.s.BurstBytes != 0 && s.s.BurstBytes < uint32(mtu+14) {
			return fmt.Errorf("invalid burst (--burst or --burst-%s) %d bytes: below one full frame (%d bytes at MTU %d), which the shaper would drop; use e.g. 64kb", s.dir, s.s.BurstBytes, mtu+14, mtu)
		}
		if s.s.BurstBytes != 0 && s.s.RateBps == 0 {
			return fmt.Errorf("invalid burst-%s %d: a burst needs a rate, e.g. --rate 50mbit --burst 64kb", s.dir, s.s.BurstBytes)
		}
	}
	if c.Queues < 0 || c.Queues > maxQueues {
		return fmt.Errorf("invalid veth-queues %d: use 1-%d queues per veth (0: one), e.g. 2", c.Queues, maxQueues)
	}
	if c.FWRules < 0 || c.FWRules > maxFWRules {
		return fmt.Errorf("invalid fw-rules %d: use 0-%d, e.g. 1000", c.FWRules, maxFWRules)
	}
	if c.FWSet < 0 || c.FWSet > maxFWSet {
		return fmt.Errorf("invalid fw-set %d: use 0-%d addresses, e.g. 10000", c.FWSet, maxFWSet)
	}
	if c.Delay < 0 || c.Delay > time.Minute {
		return fmt.Errorf("invalid delay %v: use 0-60s, e.g. 2ms", c.Delay)
	}
	if c.Jitter < 0 || c.Jitter > time.Minute {
		return fmt.Errorf("invalid jitter %v: use 0-60s, e.g. 0.5ms", c.Jitter)
	}
	r := c.Relay
	for _, p := range []struct {
		field string
		v     float64
	}{{"relay loss", r.LossPercent}, {"reorder", r.ReorderPercent}, {"duplicate", r.DuplicatePercent}} {
		if err := checkPercent(p.field, p.v); err != nil {
			return err
		}
	}
	if r.Delay < 0 || r.Delay > time.Minute || r.Jitter < 0 || r.Jitter > time.Minute || r.ReorderGap < 0 || r.ReorderGap > time.Minute {
		return fmt.Errorf("invalid relay timing (delay %v, jitter %v, reorder gap %v): use 0-60s each, e.g. 2ms", r.Delay, r.Jitter, r.ReorderGap)
	}
	relayOnly := r.ReorderPercent > 0 || r.DuplicatePercent > 0 || r.LossPercent > 0 || r.Delay > 0 || r.Jitter > 0
	if c.Topology == TopologyLoop {
		if c.DUT == DUTRelay || relayOnly || c.FWRules > 0 || c.FWSet > 0 || c.FWStateful || c.Delay > 0 || c.Jitter > 0 ||
			c.AtoB != (Shaping{}) || c.BtoA != (Shaping{}) {
			return errors.New("invalid settings for topology loop: it has no DUT, so drop --dut, --rate, --limit, --loss, --delay, --jitter, --fw-rules, --fw-set, --fw-stateful, --reorder and --duplicate (or use --topology router)")
		}
		if c.MTUA != c.MTUB && c.MTUA != 0 && c.MTUB != 0 {
			return fmt.Errorf("invalid mtu-a %d / mtu-b %d for topology loop: one link has one MTU, use --mtu", c.MTUA, c.MTUB)
		}
	}
	if c.DUTBackpressure && (c.Topology == TopologyLoop || c.DUT == DUTRelay) {
		return errors.New("invalid dut-backpressure: it sets how the kernel DUT's ingress takes frames; use it with --topology router --dut kernel")
	}
	if c.DUT == DUTRelay {
		if c.FWRules > 0 || c.FWSet > 0 || c.FWStateful || c.AtoB.BurstBytes > 0 || c.BtoA.BurstBytes > 0 {
			return errors.New("invalid settings for dut relay: --burst, --fw-rules, --fw-set and --fw-stateful are kernel-DUT settings; use --dut kernel")
		}
		if c.AtoB.LimitPackets != c.BtoA.LimitPackets {
			return errors.New("invalid limit for dut relay: the relay's shaper has one queue limit for both directions; use --limit")
		}
		if c.AtoB.LossPercent != c.BtoA.LossPercent && r.LossPercent == 0 {
			return errors.New("invalid loss for dut relay: the relay drops with one probability in both directions; use --loss")
		}
	} else if relayOnly && c.Topology != TopologyLoop {
		return errors.New("invalid settings for dut kernel: --reorder and --duplicate need --dut relay")
	}
	return nil
}

func checkPercent(field string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 100 {
		return fmt.Errorf("invalid %s %v%%: use 0-100%%, e.g. 1%%", field, v)
	}
	return nil
}

// ParseRate parses a shaping rate in the module's one rate grammar
// (internal/rate): bits per second, e.g. 50mbit, 50M or 1.5Gbit/s; a byte
// spelling such as 50mbps (tc's bytes per second) is refused. An empty
// string or "0" is zero (not shaped).
func ParseRate(s string) (uint64, error) {
	if t := strings.TrimSpace(s); t == "" || t == "0" {
		return 0, nil
	}
	bps, err := rate.ParseBits(s)
	if err != nil {
		return 0, fmt.Errorf("invalid rate %q: %w", s, err)
	}
	return uint64(math.Round(bps)), nil
}

// FormatRate formats bits per second the way ParseRate reads them.
func FormatRate(bps uint64) string {
	switch {
	case bps == 0:
		return "0"
	case bps%1e9 == 0:
		return fmt.Sprintf("%dgbit", bps/1e9)
	case bps%1e6 == 0:
		return fmt.Sprintf("%dmbit", bps/1e6)
	case bps%1e3 == 0:
		return fmt.Sprintf("%dkbit", bps/1e3)
	}
	return fmt.Sprintf("%dbit", bps)
}

// ParseSize parses a byte count: a number with an optional unit b, kb, mb
// (powers of 1024, as tc does). "64kb" is 65536.
func ParseSize(s string) (uint32, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	num, unit := splitUnit(s)
	v, err := strconv.ParseFloat(num, 64)
	mult := map[string]float64{"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1 << 20, "mb": 1 << 20}[strings.ToLower(unit)]
	if err != nil || v < 0 || mult == 0 || v*mult >= 1<<31 {
		return 0, fmt.Errorf("invalid size %q: use bytes with an optional unit b, kb or mb, e.g. 64kb", s)
	}
	return uint32(v * mult), nil
}

// ParsePercent parses a probability such as "1%", "0.5%" or "2" (percent).
func ParsePercent(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("invalid percentage %q: use 0-100, e.g. 1%% or 0.5%%", s)
	}
	return v, nil
}

// ParseDuration parses a duration such as "2ms", "0.5ms" or "100us".
func ParseDuration(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q: use a number and a unit, e.g. 2ms or 500us", s)
	}
	return d, nil
}

func splitUnit(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool {
		return (r < '0' || r > '9') && r != '.'
	})
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// String returns the configuration as compact JSON.
func (c Config) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// lossModulus sets the kernel DUT's loss resolution: 1/10000, i.e. 0.01
// points.
const lossModulus = 10000

// lossThreshold is the numgen threshold for pct percent loss.
func lossThreshold(pct float64) uint32 {
	return uint32(math.Round(pct / 100 * lossModulus))
}

// ethHeader is what tc counts beyond the IP packet on an Ethernet link.
const ethHeader = 14

// bucket is the shaper's token bucket depth in bytes on a link of IP MTU
// mtu: BurstBytes, or when none is given 10 ms at the rate, but at least
// two full frames (tbf drops frames bigger than its bucket).
func (s Shaping) bucket(mtu int) uint32 {
	if s.BurstBytes != 0 {
		return s.BurstBytes
	}
	return uint32(max(s.RateBps/8/100, uint64(2*(mtu+ethHeader))))
}
