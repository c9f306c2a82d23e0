package lab

import (
	"encoding/json"
	"flag"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    uint64
		wantErr string
	}{
		{name: "mbit", in: "50mbit", want: 50e6},
		{name: "gbit fraction", in: "1.5gbit", want: 1.5e9},
		{name: "kbit upper", in: "500Kbit", want: 500e3},
		{name: "M suffix", in: "50M", want: 50e6},
		{name: "G suffix", in: "1G", want: 1e9},
		{name: "Mbit/s", in: "50Mbit/s", want: 50e6},
		{name: "bare bits", in: "50000000", want: 50e6},
		{name: "tc bytes refused", in: "1mbps", wantErr: "tc reads it as bytes per second (8 Mbit/s)"},
		{name: "MBps refused", in: "1MBps", wantErr: "(1 Mbit/s)"},
		{name: "empty", in: "", want: 0},
		{name: "zero", in: "0", want: 0},
		{name: "no unit", in: "50", wantErr: "did you mean 50M"},
		{name: "typo", in: "50mbt", wantErr: `unit "mbt" unknown`},
		{name: "negative", in: "-5mbit", wantErr: "positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRate(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseRate(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			if tt.want > 0 {
				back, err := ParseRate(FormatRate(got))
				if err != nil || back != got {
					t.Errorf("FormatRate round trip: %q -> %d, %v", FormatRate(got), back, err)
				}
			}
		})
	}
}

func TestFlagsConfig(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Config
		wantErr string
	}{
		{name: "defaults", args: nil, want: Config{Name: "x", Topology: TopologyRouter, DUT: DUTKernel}},
		{
			name: "both directions",
			args: []string{"--rate", "50mbit", "--limit", "100", "--loss", "1%", "--fw-rules", "1000", "--mtu", "9000"},
			want: Config{Name: "x", Topology: TopologyRouter, DUT: DUTKernel, FWRules: 1000, MTUA: 9000, MTUB: 9000,
				AtoB: Shaping{RateBps: 50e6, LimitPackets: 100, LossPercent: 1},
				BtoA: Shaping{RateBps: 50e6, LimitPackets: 100, LossPercent: 1}},
		},
		{
			name: "asymmetric",
			args: []string{"--rate", "50mbit", "--rate-ba", "10mbit", "--mtu-a", "9000", "--mtu-b", "1500"},
			want: Config{Name: "x", Topology: TopologyRouter, DUT: DUTKernel, MTUA: 9000, MTUB: 1500,
				AtoB: Shaping{RateBps: 50e6}, BtoA: Shaping{RateBps: 10e6}},
		},
		{
			name: "relay",
			args: []string{"--dut", "relay", "--delay", "2ms", "--jitter", "0.5ms", "--loss", "1%", "--reorder", "2", "--duplicate", "1%"},
			want: Config{Name: "x", Topology: TopologyRouter, DUT: DUTRelay, Delay: 2 * time.Millisecond, Jitter: 500 * time.Microsecond,
				AtoB: Shaping{LossPercent: 1}, BtoA: Shaping{LossPercent: 1},
				Relay: RelayConfig{ReorderPercent: 2, DuplicatePercent: 1}},
		},
		{name: "loop", args: []string{"--topology", "loop", "--mtu", "9000"}, want: Config{Name: "x", Topology: TopologyLoop, DUT: DUTKernel, MTUA: 9000, MTUB: 9000}},
		{name: "bad rate names flag", args: []string{"--rate-ab", "fast"}, wantErr: "--rate-ab: invalid rate"},
		{name: "bad mtu", args: []string{"--mtu", "100"}, wantErr: "--mtu: invalid MTU 100"},
		{name: "bad loss", args: []string{"--loss", "150%"}, wantErr: "--loss: invalid percentage"},
		{name: "bad delay", args: []string{"--delay", "2"}, wantErr: "--delay: invalid duration"},
		{name: "bad limit", args: []string{"--limit", "-1"}, wantErr: "--limit: invalid queue limit"},
		{name: "loop with rate", args: []string{"--topology", "loop", "--rate", "1mbit"}, wantErr: "topology loop"},
		{name: "reorder needs relay", args: []string{"--reorder", "1%"}, wantErr: "need --dut relay"},
		{name: "relay has no burst", args: []string{"--dut", "relay", "--rate", "1mbit", "--burst", "64kb"}, wantErr: "kernel-DUT settings"},
		{name: "relay has one limit", args: []string{"--dut", "relay", "--rate", "1mbit", "--limit-ab", "10"}, wantErr: "use --limit"},
		{name: "burst below frame", args: []string{"--rate", "1mbit", "--burst", "100"}, wantErr: "--burst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("up", flag.ContinueOnError)
			f := AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.Config("x")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Config mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	got, err := ParseConfig("tmp", []string{"--rate", "50mbit", "--mtu", "9000"})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Name: "tmp", Topology: TopologyRouter, DUT: DUTKernel, MTUA: 9000, MTUB: 9000,
		AtoB: Shaping{RateBps: 50e6}, BtoA: Shaping{RateBps: 50e6}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseConfig (-want +got):\n%s", diff)
	}
	if _, err := ParseConfig("tmp", []string{"--rate"}); err == nil {
		t.Error("ParseConfig accepted --rate without a value")
	}
}

func TestValidateName(t *testing.T) {
	for _, n := range []string{"", "Demo", "-x", "a_b", strings.Repeat("a", 25), "a/b"} {
		if ValidateName(n) == nil {
			t.Errorf("ValidateName(%q) = nil, want an error", n)
		}
	}
	for _, n := range []string{"demo", "t123-abc", "1"} {
		if err := ValidateName(n); err != nil {
			t.Errorf("ValidateName(%q) = %v", n, err)
		}
	}
}

func TestPortJSON(t *testing.T) {
	p := Port{Namespace: "ns", Interface: "a0", MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1},
		IPv4: netip.MustParsePrefix("198.18.1.2/24"), GatewayV4: netip.MustParseAddr("198.18.1.1"), MTU: 1500}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mac":"02:00:00:00:00:01"`) {
		t.Errorf("MAC not a string: %s", b)
	}
	var back Port
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseSNMP(t *testing.T) {
	in := "Ip: Forwarding DefaultTTL ForwDatagrams\nIp: 1 64 1234\nIcmp: InMsgs\nIcmp: 7\n"
	want := map[string]uint64{"Ip:Forwarding": 1, "Ip:DefaultTTL": 64, "Ip:ForwDatagrams": 1234, "Icmp:InMsgs": 7}
	if diff := cmp.Diff(want, parseSNMP(in)); diff != "" {
		t.Errorf("parseSNMP (-want +got):\n%s", diff)
	}
	if got := parseSNMP6("Ip6InReceives 5\nIp6OutForwDatagrams     42\n")["Ip6OutForwDatagrams"]; got != 42 {
		t.Errorf("parseSNMP6 = %d, want 42", got)
	}
}

func TestLossThreshold(t *testing.T) {
	for _, tt := range []struct {
		pct  float64
		want uint32
	}{{1, 100}, {0.01, 1}, {50, 5000}, {100, 10000}, {2.345, 235}} {
		if got := lossThreshold(tt.pct); got != tt.want {
			t.Errorf("lossThreshold(%g) = %d, want %d", tt.pct, got, tt.want)
		}
	}
}

func TestCPUMask(t *testing.T) {
	for _, tt := range []struct {
		cpus []int
		want string
	}{{[]int{1}, "2"}, {[]int{0, 1}, "3"}, {[]int{33}, "2,00000000"}, {[]int{0, 35}, "8,00000001"}} {
		if got := cpuMask(tt.cpus); got != tt.want {
			t.Errorf("cpuMask(%v) = %q, want %q", tt.cpus, got, tt.want)
		}
		back, err := parseCPUMask(tt.want + "\n")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.cpus, back); diff != "" {
			t.Errorf("parseCPUMask(%q) (-want +got):\n%s", tt.want, diff)
		}
	}
}

// The relay DUT shapes in user space: --rate and --limit become its
// settings, and no tbf is configured.
func TestRelayRateSettings(t *testing.T) {
	c := Config{Name: "t", DUT: DUTRelay, Delay: 10 * time.Millisecond, AtoB: Shaping{RateBps: 100e6, LimitPackets: 50}, BtoA: Shaping{RateBps: 20e6, LimitPackets: 50}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d := c.withDefaults()
	if d.Relay.RateABBps != 100e6 || d.Relay.RateBABps != 20e6 || d.Relay.LimitPackets != 50 || d.Relay.Delay != 10*time.Millisecond {
		t.Errorf("relay settings %+v: want rates 100e6/20e6, limit 50, delay 10ms", d.Relay)
	}
	if d.AtoB.RateBps != 0 || d.BtoA.RateBps != 0 || d.AtoB.LimitPackets != 0 {
		t.Errorf("kernel shaping %+v %+v: want none with the relay", d.AtoB, d.BtoA)
	}
}
