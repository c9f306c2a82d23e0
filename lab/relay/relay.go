// Package relay is the lab's user-space DUT: a process forwarding IP frames
// between the two ports of the DUT namespace with exact delay, jitter,
// loss, reordering and duplication (what netem would do, where the kernel
// has no netem). lab.Up starts it (Start) as a copy of the running program
// whose environment names the lab and carries the Spec; that program
// enters it explicitly by calling Enter first thing in main, and so must
// the TestMain of a test binary whose tests bring up a relay lab.
// Importing the package has no effect.
package relay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"
)

// The environment of a relay process: envName holds the lab's name and
// marks the process as that lab's relay (End checks it before signalling a
// PID); envSpec holds the Spec as JSON.
const (
	envName = "RFC2544_LAB_RELAY"
	envSpec = "RFC2544_LAB_RELAY_STATE"
)

// Enter runs the relay and exits, when this process was started as a
// lab's relay (envName is set); otherwise it returns at once.
func Enter() {
	name := os.Getenv(envName)
	if name == "" {
		return
	}
	os.Exit(Main(name, os.Getenv(envSpec)))
}

// Spec is what a relay process forwards between and how.
type Spec struct {
	// Namespace is the DUT's network namespace, holding both ports.
	Namespace string `json:"namespace"`
	// A and B are the DUT's ports toward tester ports A and B.
	A Side `json:"a"`
	B Side `json:"b"`
	// Socket is the path of the control socket (Command).
	Socket string `json:"socket"`
	// CPUs pins the forwarding threads; empty: any CPU.
	CPUs []int `json:"cpus,omitempty"`
	// Settings apply once the relay is told to go live.
	Settings Settings `json:"settings"`
}

// Side is one DUT port of the relay.
type Side struct {
	Interface string `json:"interface"`
	// MAC is the DUT port's own address, the source of what it sends;
	// PeerMAC the tester port's, the destination.
	MAC     net.HardwareAddr `json:"mac"`
	PeerMAC net.HardwareAddr `json:"peer_mac"`
	MTU     int              `json:"mtu"`
	// IPv4 and IPv6 are the DUT port's addresses: frames to them are the
	// DUT kernel's, not forwarded. Either may be invalid (unset).
	IPv4 netip.Addr `json:"ipv4"`
	IPv6 netip.Addr `json:"ipv6"`
}

// Settings sets what the relay DUT does to every frame it forwards. All
// probabilities are independent per frame.
type Settings struct {
	// Delay is the fixed one-way delay added to every frame. Zero means
	// forward as soon as possible.
	Delay time.Duration `json:"delay_ns,omitempty"`
	// Jitter is the half-width of a uniform random offset added to Delay:
	// each frame waits Delay+U(-Jitter, +Jitter), never less than zero. As
	// with netem, jitter larger than the frame spacing reorders frames;
	// such frames are counted as reordered.
	Jitter time.Duration `json:"jitter_ns,omitempty"`
	// LossPercent is the probability in percent that a frame is dropped.
	LossPercent float64 `json:"loss_percent,omitempty"`
	// ReorderPercent is the probability in percent that a frame is held
	// back by ReorderGap beyond its due time, so later frames overtake it.
	ReorderPercent float64 `json:"reorder_percent,omitempty"`
	// ReorderGap is how long a reordered frame is held back. Zero means
	// 1 ms.
	ReorderGap time.Duration `json:"reorder_gap_ns,omitempty"`
	// DuplicatePercent is the probability in percent that a frame is sent
	// twice.
	DuplicatePercent float64 `json:"duplicate_percent,omitempty"`
	// Seed seeds the relay's random generator. Zero means seeded from the
	// clock.
	Seed uint64 `json:"seed,omitempty"`
	// RateABBps and RateBABps shape each direction to a rate in bits per
	// second, counting each frame without its FCS as the kernel DUT's tbf
	// does: a frame leaves the shaper when the link has sent the ones
	// before it (len·8/rate each), then waits Delay. Zero means unshaped.
	RateABBps uint64 `json:"rate_ab_bps,omitempty"`
	RateBABps uint64 `json:"rate_ba_bps,omitempty"`
	// LimitPackets is the shaper's queue in frames per direction: a frame
	// arriving while that many wait for the link is dropped (Overflow).
	// Zero means 1000 when a rate is set.
	LimitPackets int `json:"limit_packets,omitempty"`
}

// DefaultLimitPackets is the shaper's queue when a rate is set and
// Settings.LimitPackets is zero, as the kernel DUT's default.
const DefaultLimitPackets = 1000

// DirStats counts what the relay did in one direction.
type DirStats struct {
	// Received counts IP frames addressed to the DUT port's MAC.
	Received uint64 `json:"received"`
	// Forwarded counts frames sent on, duplicates included.
	Forwarded uint64 `json:"forwarded"`
	// Dropped counts frames dropped by the configured random loss.
	Dropped uint64 `json:"dropped"`
	// Duplicated counts extra copies sent.
	Duplicated uint64 `json:"duplicated"`
	// Reordered counts frames sent after a frame received later than
	// them (what a receiver counts as late/out-of-order arrivals).
	Reordered uint64 `json:"reordered"`
	// Overflow counts frames dropped because the relay's queue was full.
	Overflow uint64 `json:"overflow"`
	// SocketDrops counts frames the kernel dropped before the relay read
	// them (PACKET_STATISTICS): the relay was overrun.
	SocketDrops uint64 `json:"socket_drops"`
	// Expired counts frames dropped for TTL/hop limit exhausted; Local
	// counts frames for the DUT's own addresses, left to its kernel.
	Expired uint64 `json:"expired"`
	Local   uint64 `json:"local"`
	// SendErrors counts failed transmissions.
	SendErrors uint64 `json:"send_errors"`
	// FirstRxUnixNano and LastTxUnixNano are the wall-clock times of the
	// first frame received and the last frame sent since the counters
	// were last reset; zero before any.
	FirstRxUnixNano int64 `json:"first_rx_unix_ns,omitempty"`
	LastTxUnixNano  int64 `json:"last_tx_unix_ns,omitempty"`
}

// Stats is the relay's state, as Command answers it.
type Stats struct {
	AtoB DirStats `json:"a_to_b"`
	BtoA DirStats `json:"b_to_a"`
	// PeakFPS is the highest one-direction forwarding rate seen over a
	// 100 ms window since the lab went live.
	PeakFPS float64 `json:"peak_fps"`
	// Config is the relay configuration in force.
	Config Settings `json:"config"`
	// Uptime is how long the relay process has run.
	Uptime time.Duration `json:"uptime_ns"`
}

// Command sends one command line (stats: the counters; live: reset them
// and apply the Settings) over the relay's control socket sock and
// decodes the reply.
func Command(sock, cmd string) (Stats, error) {
	var rs Stats
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return rs, fmt.Errorf("contact relay at %s: %w", sock, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintln(c, cmd); err != nil {
		return rs, fmt.Errorf("relay %s: %w", cmd, err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return rs, fmt.Errorf("relay %s: %w", cmd, err)
	}
	var reply struct {
		Error string `json:"error"`
		Stats Stats  `json:"stats"`
	}
	if err := json.Unmarshal(line, &reply); err != nil {
		return rs, fmt.Errorf("relay %s: bad reply: %w", cmd, err)
	}
	if reply.Error != "" {
		return rs, fmt.Errorf("relay %s: %s", cmd, reply.Error)
	}
	return reply.Stats, nil
}
