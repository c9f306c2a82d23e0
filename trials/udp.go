package trials

import (
	"fmt"
	"net/netip"
	"time"
)

// UDPPortConfig is one side of the UDP transport: the tester's kernel UDP
// sockets on one host (or in one network namespace).
type UDPPortConfig struct {
	// Namespace is the network namespace the sockets are opened in (as
	// under /run/netns; needs root). Empty means the caller's namespace,
	// which needs no privileges.
	Namespace string `json:"namespace,omitempty"`
	// Addr is the tester's IPv4 address on this side: the receive socket
	// binds to it and the other side sends to it. Required for IPv4
	// trials.
	Addr netip.Addr `json:"addr,omitzero"`
	// Addr6 is the same for IPv6 trials.
	Addr6 netip.Addr `json:"addr6,omitzero"`
	// Port is the UDP port the receive socket binds to. Zero means
	// DefaultUDPPort (A) or DefaultUDPPort+1 (B). Send sockets use
	// ephemeral source ports, one per flow.
	Port uint16 `json:"port,omitempty"`
}

// UDPConfig configures a UDPEngine. The zero value of every optional field
// is a documented default.
type UDPConfig struct {
	// A and B are the two sides; A->B traffic goes from A's sockets to B's
	// Addr (or Addr6) through whatever routes the path (the DUT).
	A UDPPortConfig `json:"a"`
	B UDPPortConfig `json:"b"`
	// PathMTU is the IP MTU of the path in bytes: frame sizes whose IP
	// packet exceeds it are refused (the sockets never fragment: they set
	// IP_PMTUDISC_DO). Zero means 1500.
	PathMTU int `json:"path_mtu,omitempty"`
	// MaxRateFPS, TesterLimitTolerance, MaxLag, Batch, TxCPU and RxCPU
	// mean what they mean in Config.
	MaxRateFPS           float64       `json:"max_rate_fps,omitempty"`
	TesterLimitTolerance float64       `json:"tester_limit_tolerance,omitempty"`
	MaxLag               time.Duration `json:"max_lag_ns,omitempty"`
	Batch                int           `json:"batch,omitempty"`
	TxCPU                int           `json:"tx_cpu,omitempty"`
	RxCPU                int           `json:"rx_cpu,omitempty"`
	// AllowAnyDestination permits addresses outside 198.18.0.0/15,
	// 2001:2::/48 and loopback (RFC 6815).
	AllowAnyDestination bool `json:"allow_any_destination,omitempty"`
	// SocketBuffer is the send and receive buffer of every socket, in
	// bytes. Zero means DefaultUDPSocketBuffer. It is forced past the
	// system limits (SO_SNDBUFFORCE, SO_RCVBUFFORCE) when permitted
	// (CAP_NET_ADMIN), else capped by net.core.[rw]mem_max.
	SocketBuffer int `json:"socket_buffer,omitempty"`
}

// UDP transport defaults.
const (
	// DefaultUDPPort is port A's receive port; port B's is one more.
	// Both lie below every ephemeral range (Linux 32768-60999, IANA
	// 49152-65535), so no socket's automatically chosen source port can
	// hold them.
	DefaultUDPPort = 25440
	// DefaultUDPSocketBuffer is 64 MiB: on a veth path a datagram stays
	// charged to the sending socket until the DUT has forwarded it, so a
	// smaller buffer blocks the sender before the DUT's queue fills.
	DefaultUDPSocketBuffer = 64 << 20
	// DefaultPathMTU is the IP MTU assumed when UDPConfig.PathMTU is 0.
	DefaultPathMTU = 1500
	// udpMaxBatch bounds the datagrams per sendmmsg/recvmmsg call.
	udpMaxBatch = 64
)

func (c UDPConfig) withDefaults() UDPConfig {
	if c.A.Port == 0 {
		c.A.Port = DefaultUDPPort
	}
	if c.B.Port == 0 {
		c.B.Port = DefaultUDPPort + 1
	}
	if c.PathMTU == 0 {
		c.PathMTU = DefaultPathMTU
	}
	c.TesterLimitTolerance, c.MaxLag = limitDefaults(c.TesterLimitTolerance, c.MaxLag)
	if c.Batch <= 0 {
		c.Batch = udpMaxBatch
	}
	if c.SocketBuffer <= 0 {
		c.SocketBuffer = DefaultUDPSocketBuffer
	}
	return c
}

// Validate checks c; the error names the field, the value and the fix.
func (c UDPConfig) Validate() error {
	allowed := func(a netip.Addr) bool {
		return c.AllowAnyDestination || a.IsLoopback() || benchNet4.Contains(a) || benchNet6.Contains(a)
	}
	for _, p := range []struct {
		name string
		pc   UDPPortConfig
	}{{"a", c.A}, {"b", c.B}} {
		if !p.pc.Addr.IsValid() && !p.pc.Addr6.IsValid() {
			return fmt.Errorf("udp port %s: no addr or addr6; give the tester's address on this side, e.g. 198.18.1.2", p.name)
		}
		if p.pc.Addr.IsValid() && !p.pc.Addr.Is4() {
			return fmt.Errorf("udp port %s addr %v: want an IPv4 address, e.g. 198.18.1.2 (IPv6 goes in addr6)", p.name, p.pc.Addr)
		}
		if p.pc.Addr6.IsValid() && (!p.pc.Addr6.Is6() || p.pc.Addr6.Is4In6()) {
			return fmt.Errorf("udp port %s addr6 %v: want an IPv6 address, e.g. 2001:2:0:1::2", p.name, p.pc.Addr6)
		}
		for _, a := range []netip.Addr{p.pc.Addr, p.pc.Addr6} {
			if a.IsValid() && !allowed(a) {
				return fmt.Errorf("udp port %s address %v: outside the benchmark ranges %v and %v and loopback (RFC 6815): use test addresses, or set allow_any_destination if this network is yours to load",
					p.name, a, benchNet4, benchNet6)
			}
		}
	}
	a, b := c.withDefaults().A, c.withDefaults().B
	if a.Namespace == b.Namespace && a.Port == b.Port && (a.Addr == b.Addr || a.Addr6 == b.Addr6) {
		return fmt.Errorf("udp port b port %d: same address and port as port a; give the two sides different ports", b.Port)
	}
	if c.PathMTU != 0 && (c.PathMTU < 1280 || c.PathMTU > 65535) {
		return fmt.Errorf("udp path_mtu %d: want 1280 to 65535 bytes, or 0 for %d", c.PathMTU, DefaultPathMTU)
	}
	if err := validateLimits("udp ", c.MaxRateFPS, c.TesterLimitTolerance); err != nil {
		return err
	}
	if c.Batch < 0 || c.Batch > udpMaxBatch {
		return fmt.Errorf("udp batch %d: want 0 (default %d) to %d datagrams per call", c.Batch, udpMaxBatch, udpMaxBatch)
	}
	if c.SocketBuffer < 0 {
		return fmt.Errorf("udp socket_buffer %d: must be 0 (default %d) or positive", c.SocketBuffer, DefaultUDPSocketBuffer)
	}
	return nil
}
