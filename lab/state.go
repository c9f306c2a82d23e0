package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rfc2544/rfc2544/internal/fileio"
)

// StateDir is where labs record their state, one NAME.json per lab. The
// environment variable RFC2544_LAB_DIR overrides it.
const StateDir = "/run/rfc2544/labs"

func stateDir() string {
	if d := os.Getenv("RFC2544_LAB_DIR"); d != "" {
		return d
	}
	return StateDir
}

func statePath(name string) string { return filepath.Join(stateDir(), name+".json") }
func lockPath(name string) string  { return filepath.Join(stateDir(), name+".lock") }
func relayPIDPath(name string) string {
	return filepath.Join(stateDir(), name+".relay.pid")
}
func relaySockPath(name string) string { return filepath.Join(stateDir(), name+".relay.sock") }
func relayLogPath(name string) string  { return filepath.Join(stateDir(), name+".relay.log") }

// Namespace and interface names. Every name a lab creates derives from its
// lab name, so Down finds leftovers of a crashed Up without any state.
const nsPrefix = "r2544-"

// Namespaces returns the names of the network namespaces a lab called name
// uses: A, DUT and B (the loop topology has no DUT namespace).
func Namespaces(name string) (a, dut, b string) {
	return nsPrefix + name + "-a", nsPrefix + name + "-dut", nsPrefix + name + "-b"
}

// Interface names inside the namespaces. They live only inside the lab's
// own namespaces, never in the host's, so they cannot collide with anything.
const (
	ifA    = "a0"    // tester port A, in namespace A
	ifB    = "b0"    // tester port B, in namespace B
	ifDutA = "dut-a" // DUT port facing A
	ifDutB = "dut-b" // DUT port facing B
)

// Addresses (RFC 2544 App. C; RFC 5180 for IPv6). Router topology: A side
// 198.18.1.0/24 and 2001:2:0:1::/64, B side 198.19.1.0/24 and
// 2001:2:0:8001::/64; the DUT is .1 / ::1 on each side and the tester port
// .2 / ::2. Loop topology: one subnet, A is 198.18.1.2 and 2001:2:0:1::2,
// B is 198.18.1.3 and 2001:2:0:1::3.
var (
	addrA4     = netip.MustParsePrefix("198.18.1.2/24")
	addrDutA4  = netip.MustParsePrefix("198.18.1.1/24")
	addrDutB4  = netip.MustParsePrefix("198.19.1.1/24")
	addrB4     = netip.MustParsePrefix("198.19.1.2/24")
	addrLoopB4 = netip.MustParsePrefix("198.18.1.3/24")

	addrA6     = netip.MustParsePrefix("2001:2:0:1::2/64")
	addrDutA6  = netip.MustParsePrefix("2001:2:0:1::1/64")
	addrDutB6  = netip.MustParsePrefix("2001:2:0:8001::1/64")
	addrB6     = netip.MustParsePrefix("2001:2:0:8001::2/64")
	addrLoopB6 = netip.MustParsePrefix("2001:2:0:1::3/64")
)

// Port is one tester port of a lab.
type Port struct {
	// Namespace is the network namespace that holds the port (bound
	// under /run/netns, usable with nsutil.Do).
	Namespace string `json:"namespace"`
	// Interface is the port's interface name inside Namespace.
	Interface string `json:"interface"`
	// MAC is the port's Ethernet address.
	MAC net.HardwareAddr `json:"-"`
	// IPv4 and IPv6 are the tester's own addresses on the port.
	IPv4 netip.Prefix `json:"ipv4"`
	IPv6 netip.Prefix `json:"ipv6"`
	// GatewayV4 and GatewayV6 are the DUT's addresses on this side (in
	// the loop topology, the other port's addresses).
	GatewayV4 netip.Addr `json:"gateway_v4"`
	GatewayV6 netip.Addr `json:"gateway_v6"`
	// PeerMAC is the MAC of the interface at the other end of the port's
	// veth (the DUT port, or the other tester port in a loop). Testers
	// must still learn it by ARP/ND; it is recorded for checks.
	PeerMAC net.HardwareAddr `json:"-"`
	// MTU is the link's IP MTU in bytes.
	MTU int `json:"mtu"`
}

type portJSON Port

// MarshalJSON writes MACs as colon-separated hex strings.
func (p Port) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		portJSON
		MAC     string `json:"mac"`
		PeerMAC string `json:"peer_mac"`
	}{portJSON(p), p.MAC.String(), p.PeerMAC.String()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Port) UnmarshalJSON(b []byte) error {
	var v struct {
		portJSON
		MAC     string `json:"mac"`
		PeerMAC string `json:"peer_mac"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Port(v.portJSON)
	var err error
	if v.MAC != "" {
		if p.MAC, err = net.ParseMAC(v.MAC); err != nil {
			return fmt.Errorf("port mac: %w", err)
		}
	}
	if v.PeerMAC != "" {
		if p.PeerMAC, err = net.ParseMAC(v.PeerMAC); err != nil {
			return fmt.Errorf("port peer_mac: %w", err)
		}
	}
	return nil
}

// DUTPort is one port of the DUT namespace.
type DUTPort struct {
	Interface string       `json:"interface"`
	MAC       string       `json:"mac"`
	IPv4      netip.Prefix `json:"ipv4"`
	IPv6      netip.Prefix `json:"ipv6"`
	MTU       int          `json:"mtu"`
}

// State describes a lab that is up: what Up created, so later commands find
// everything. It is stored as JSON in StateDir/NAME.json.
type State struct {
	Name     string   `json:"name"`
	Topology Topology `json:"topology"`
	DUT      DUTKind  `json:"dut"`
	// Config is the configuration the lab was built with, defaults filled.
	Config Config `json:"config"`
	// A and B are the tester ports.
	A Port `json:"a"`
	B Port `json:"b"`
	// DUTNamespace is the DUT's namespace; empty in the loop topology.
	DUTNamespace string `json:"dut_namespace,omitempty"`
	// DUTA and DUTB are the DUT's ports facing A and B.
	DUTA DUTPort `json:"dut_a,omitzero"`
	DUTB DUTPort `json:"dut_b,omitzero"`
	// DUTCPUs are the CPUs the DUT's receive processing is steered to
	// (RPS); empty when not steered. A tester should avoid them.
	DUTCPUs []int `json:"dut_cpus,omitempty"`
	// TesterQdisc is set when the tester ports have a transmit queue
	// (pfifo) that makes an overrun kernel DUT drop like an appliance: a
	// raw sender must go through it (trials Config.QdiscPath), not bypass
	// it. False with Config.DUTBackpressure: frames go straight into the
	// veth and an overrun DUT holds the sender back.
	TesterQdisc bool `json:"tester_qdisc,omitempty"`
	// Features are the kernel features probed at Up.
	Features Features `json:"features"`
	// RelayPID and RelayStart identify the relay process (start time in
	// clock ticks since boot, from /proc/PID/stat, against PID reuse).
	RelayPID   int    `json:"relay_pid,omitempty"`
	RelayStart uint64 `json:"relay_start,omitempty"`
	// RelaySocket is the relay's control socket (see RelayStats).
	RelaySocket string `json:"relay_socket,omitempty"`
	// RelayCeilingFPS is the relay's own forwarding ceiling in frames per
	// second (one direction, 64-byte frames), measured by Up before the
	// lab went live: frames forwarded over the time from the first
	// received to the last sent. RelaySaturated is true when the
	// measuring burst overran the relay, so the figure is the relay's
	// limit; when false it is a lower bound (the sender was slower).
	RelayCeilingFPS float64 `json:"relay_ceiling_fps,omitempty"`
	RelaySaturated  bool    `json:"relay_saturated,omitempty"`
	// Created is when Up finished.
	Created time.Time `json:"created"`
}

// Features records which kernel features the lab found (probed once per
// process; Probe reads them without building a lab).
type Features struct {
	Netem    bool `json:"netem"`
	Tbf      bool `json:"tbf"`
	Nftables bool `json:"nftables"`
	CPUs     int  `json:"cpus"`
}

// ErrNotFound is returned by Load for a lab that is not up.
var ErrNotFound = errors.New("lab not found")

// Load reads the state of the lab called name.
func Load(name string) (*State, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(statePath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lab %q: %w: run 'rfc2544 lab up --name %s' first", name, ErrNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("read lab state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse lab state %s: %w", statePath(name), err)
	}
	return &s, nil
}

// List returns the names of the labs that are up, sorted.
func List() ([]string, error) {
	ents, err := os.ReadDir(stateDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var names []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && !e.IsDir() && ValidateName(n) == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Description is the lab as a run's DUT description: "lab NAME" (or
// "temporary lab NAME", for a lab made for one run and removed after it),
// its topology, DUT kind and settings.
func (s *State) Description(temporary bool) string {
	kind := "lab"
	if temporary {
		kind = "temporary lab"
	}
	return fmt.Sprintf("%s %s: %s topology, %s DUT (%s)", kind, s.Name, s.Topology, s.DUT, s.Config.Summary())
}

// Settings are the lab's DUT settings as a run's results record them (key
// → value, units in the keys); rates, loss and firewall rules only when set.
func (s *State) Settings() map[string]string {
	c := s.Config
	m := map[string]string{"lab": s.Name, "topology": s.Topology.String(), "dut": s.DUT.String(),
		"mtu_a": fmt.Sprint(c.MTUA), "mtu_b": fmt.Sprint(c.MTUB)}
	for _, d := range []struct {
		dir string
		s   Shaping
		mtu int
	}{{"ab", c.AtoB, c.MTUB}, {"ba", c.BtoA, c.MTUA}} {
		if d.s.RateBps > 0 {
			m["rate_"+d.dir+"_bps"] = fmt.Sprint(d.s.RateBps)
			m["limit_"+d.dir+"_packets"] = fmt.Sprint(d.s.LimitPackets)
			m["burst_"+d.dir+"_bytes"] = fmt.Sprint(d.s.bucket(d.mtu))
		}
	}
	if c.AtoB.LossPercent > 0 {
		m["loss_ab_percent"] = fmt.Sprint(c.AtoB.LossPercent)
	}
	if c.FWRules > 0 {
		m["fw_rules"] = fmt.Sprint(c.FWRules)
	}
	return m
}

func (s *State) save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab state: %w", err)
	}
	write := func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}
	if err := fileio.WriteFiles(stateDir(), []fileio.File{{Name: filepath.Base(statePath(s.Name)), Write: write}}, nil); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	return nil
}
