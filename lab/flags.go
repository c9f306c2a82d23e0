package lab

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Flags holds the lab's command-line settings as registered by AddFlags, so
// every verb that builds a lab (`lab up`, `run` with a temporary lab) reads
// the same flags.
type Flags struct {
	topology, dut                  string
	rate, rateAB, rateBA           string
	burst, burstAB, burstBA        string
	limit, limitAB, limitBA        string
	loss, lossAB, lossBA           string
	delay, jitter                  string
	reorder, reorderGap, duplicate string
	mtu, mtuA, mtuB                int
	fwRules, fwSet                 int
	fwStateful                     bool
	fwSweep                        string
	seed                           uint64
	noRPS                          bool
	backpressure                   bool
	vethQueues                     int
}

// AddFlags registers the lab settings on fs: --topology, --dut, --rate,
// --rate-ab, --rate-ba, --burst[-ab|-ba], --limit[-ab|-ba], --loss[-ab|-ba],
// --delay, --jitter, --reorder, --reorder-gap, --duplicate, --seed,
// --fw-rules, --fw-set, --fw-stateful, --mtu, --mtu-a, --mtu-b, --no-rps,
// --dut-backpressure and --veth-queues. The name is not among
// them: each verb names its lab its own way.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.topology, "topology", "router", "lab `shape`: router (A-DUT-B) or loop (A wired to B, no DUT)")
	fs.StringVar(&f.dut, "dut", "kernel", "DUT `kind`: kernel (Linux forwarding, tc, nftables) or relay (user-space forwarder)")
	fs.StringVar(&f.rate, "rate", "", "shaped `rate` of the DUT in bits per second, both directions, e.g. 50M, 50mbit or 1Gbit/s (tc's byte units such as mbps are refused)")
	fs.StringVar(&f.rateAB, "rate-ab", "", "shaped `rate` from A to B (overrides --rate)")
	fs.StringVar(&f.rateBA, "rate-ba", "", "shaped `rate` from B to A (overrides --rate)")
	fs.StringVar(&f.burst, "burst", "", "token bucket `size` with --rate, e.g. 64kb (default 10ms at the rate)")
	fs.StringVar(&f.burstAB, "burst-ab", "", "token bucket `size` from A to B")
	fs.StringVar(&f.burstBA, "burst-ba", "", "token bucket `size` from B to A")
	fs.StringVar(&f.limit, "limit", "", "DUT queue limit in `packets`, e.g. 1000 (default 1000 with --rate)")
	fs.StringVar(&f.limitAB, "limit-ab", "", "queue limit in `packets` from A to B")
	fs.StringVar(&f.limitBA, "limit-ba", "", "queue limit in `packets` from B to A")
	fs.StringVar(&f.loss, "loss", "", "random loss `percent`, both directions, e.g. 1%")
	fs.StringVar(&f.lossAB, "loss-ab", "", "random loss `percent` from A to B")
	fs.StringVar(&f.lossBA, "loss-ba", "", "random loss `percent` from B to A")
	fs.StringVar(&f.delay, "delay", "", "one-way `delay`, e.g. 2ms (kernel DUT needs netem; or use --dut relay)")
	fs.StringVar(&f.jitter, "jitter", "", "delay `jitter` (± uniform), e.g. 0.5ms")
	fs.StringVar(&f.reorder, "reorder", "", "relay: `percent` of frames held back so later frames overtake them")
	fs.StringVar(&f.reorderGap, "reorder-gap", "", "relay: how long a reordered frame is held back (`duration`, default 1ms)")
	fs.StringVar(&f.duplicate, "duplicate", "", "relay: `percent` of frames sent twice")
	fs.Uint64Var(&f.seed, "seed", 0, "relay: random `seed` (default from the clock)")
	fs.IntVar(&f.fwRules, "fw-rules", 0, "`N` non-matching firewall rules the DUT evaluates per packet before accepting it")
	fs.StringVar(&f.fwSweep, "fw-rules-sweep", "", "run once per firewall rule `count` (comma-separated, e.g. 0,100,1000,10000) and compare the runs (run/throughput --lab only; a plan file says it as lab_sweep: {fw_rules: [0, 100]}, which this flag replaces)")
	fs.IntVar(&f.fwSet, "fw-set", 0, "`N` addresses in an nftables set the DUT looks each packet's source up in once")
	fs.BoolVar(&f.fwStateful, "fw-stateful", false, "stateful DUT rule base: conntrack established/related accept, invalid drop, new test flows accepted by an explicit rule, policy drop")
	fs.IntVar(&f.mtu, "mtu", 0, "IP MTU of both links in `bytes`, e.g. 9000 (default 1500)")
	fs.IntVar(&f.mtuA, "mtu-a", 0, "IP MTU of the A-side link in `bytes` (overrides --mtu)")
	fs.IntVar(&f.mtuB, "mtu-b", 0, "IP MTU of the B-side link in `bytes` (overrides --mtu)")
	fs.BoolVar(&f.noRPS, "no-rps", false, "do not steer the DUT's receive processing to its own CPU")
	fs.BoolVar(&f.backpressure, "dut-backpressure", false, "an overrun kernel DUT holds the sender back (as Ethernet flow control) instead of dropping like an appliance")
	fs.IntVar(&f.vethQueues, "veth-queues", 0, "transmit and receive queues of each veth (`N`, default 1), for the xdp transport's --queues N")
	return f
}

// Config turns the parsed flags into a validated Config named name. Errors
// name the flag, the bad value and an example.
func (f *Flags) Config(name string) (Config, error) {
	c := Config{Name: name, FWRules: f.fwRules, FWSet: f.fwSet, FWStateful: f.fwStateful}
	var err error
	if c.Topology, err = ParseTopology(f.topology); err != nil {
		return Config{}, fmt.Errorf("--topology: %w", err)
	}
	if c.DUT, err = ParseDUTKind(f.dut); err != nil {
		return Config{}, fmt.Errorf("--dut: %w", err)
	}
	// pick returns the one-direction value if given, else the both-ways
	// one, and the flag it came from (for error messages).
	pick := func(flag, both, one, suffix string) (string, string) {
		if one != "" {
			return one, "--" + flag + suffix
		}
		return both, "--" + flag
	}
	for _, d := range []struct {
		suffix                   string
		s                        *Shaping
		rate, burst, limit, loss string
	}{
		{"-ab", &c.AtoB, f.rateAB, f.burstAB, f.limitAB, f.lossAB},
		{"-ba", &c.BtoA, f.rateBA, f.burstBA, f.limitBA, f.lossBA},
	} {
		v, flag := pick("rate", f.rate, d.rate, d.suffix)
		if d.s.RateBps, err = ParseRate(v); err != nil {
			return Config{}, fmt.Errorf("%s: %w", flag, err)
		}
		v, flag = pick("burst", f.burst, d.burst, d.suffix)
		if d.s.BurstBytes, err = ParseSize(v); err != nil {
			return Config{}, fmt.Errorf("%s: %w", flag, err)
		}
		if v, flag = pick("limit", f.limit, d.limit, d.suffix); v != "" {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				return Config{}, fmt.Errorf("%s: invalid queue limit %q: use a number of packets, e.g. 1000", flag, v)
			}
			d.s.LimitPackets = uint32(n)
		}
		v, flag = pick("loss", f.loss, d.loss, d.suffix)
		if d.s.LossPercent, err = ParsePercent(v); err != nil {
			return Config{}, fmt.Errorf("%s: %w", flag, err)
		}
	}
	if c.Delay, err = ParseDuration(f.delay); err != nil {
		return Config{}, fmt.Errorf("--delay: %w", err)
	}
	if c.Jitter, err = ParseDuration(f.jitter); err != nil {
		return Config{}, fmt.Errorf("--jitter: %w", err)
	}
	if c.Relay.ReorderPercent, err = ParsePercent(f.reorder); err != nil {
		return Config{}, fmt.Errorf("--reorder: %w", err)
	}
	if c.Relay.ReorderGap, err = ParseDuration(f.reorderGap); err != nil {
		return Config{}, fmt.Errorf("--reorder-gap: %w", err)
	}
	if c.Relay.DuplicatePercent, err = ParsePercent(f.duplicate); err != nil {
		return Config{}, fmt.Errorf("--duplicate: %w", err)
	}
	c.Relay.Seed = f.seed
	c.MTUA, c.MTUB = f.mtu, f.mtu
	if f.mtuA != 0 {
		c.MTUA = f.mtuA
	}
	if f.mtuB != 0 {
		c.MTUB = f.mtuB
	}
	for _, m := range []struct {
		flag string
		v    int
	}{{"--mtu", f.mtu}, {"--mtu-a", f.mtuA}, {"--mtu-b", f.mtuB}} {
		if m.v != 0 && (m.v < MinMTU || m.v > MaxMTU) {
			return Config{}, fmt.Errorf("%s: invalid MTU %d: use %d-%d bytes, e.g. 1500 or 9000", m.flag, m.v, MinMTU, MaxMTU)
		}
	}
	c.NoRPS = f.noRPS
	c.DUTBackpressure = f.backpressure
	c.Queues = f.vethQueues
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Sweep returns the --fw-rules-sweep rule counts (nil when not given),
// checked by ValidateSweep.
func (f *Flags) Sweep() ([]int, error) {
	if f.fwSweep == "" {
		return nil, nil
	}
	var out []int
	for _, v := range strings.Split(f.fwSweep, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("--fw-rules-sweep: invalid rule count %q: use comma-separated counts of 0-%d, e.g. 0,100,1000,10000", v, maxFWRules)
		}
		out = append(out, n)
	}
	if err := ValidateSweep(out); err != nil {
		return nil, fmt.Errorf("--fw-rules-sweep %s: %w", f.fwSweep, err)
	}
	if f.fwRules != 0 {
		return nil, fmt.Errorf("--fw-rules-sweep and --fw-rules %d: give one; the sweep sets the rule count of each run", f.fwRules)
	}
	return out, nil
}

// ParseConfig parses lab flags (as `rfc2544 lab up` takes them, without
// --name) into a validated Config named name, e.g.
// ParseConfig("tmp", []string{"--rate", "50mbit", "--mtu", "9000"}).
func ParseConfig(name string, args []string) (Config, error) {
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("lab flags: %w", err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("lab flags: unexpected argument %q", fs.Arg(0))
	}
	return f.Config(name)
}

// Flags summarises c in the flag syntax AddFlags reads (the settings that
// differ from the defaults), e.g. "--rate 50mbit --mtu 1500".
func (c Config) Flags() string {
	var s []string
	dir := func(flag string, ab, ba string) {
		switch {
		case ab == ba && ab != "":
			s = append(s, "--"+flag+" "+ab)
		default:
			if ab != "" {
				s = append(s, "--"+flag+"-ab "+ab)
			}
			if ba != "" {
				s = append(s, "--"+flag+"-ba "+ba)
			}
		}
	}
	rate := func(v uint64) string {
		if v == 0 {
			return ""
		}
		return FormatRate(v)
	}
	num := func(v uint32) string {
		if v == 0 {
			return ""
		}
		return fmt.Sprint(v)
	}
	pct := func(v float64) string {
		if v == 0 {
			return ""
		}
		return fmt.Sprintf("%g%%", v)
	}
	dir("rate", rate(c.AtoB.RateBps), rate(c.BtoA.RateBps))
	dir("burst", num(c.AtoB.BurstBytes), num(c.BtoA.BurstBytes))
	dir("limit", num(c.AtoB.LimitPackets), num(c.BtoA.LimitPackets))
	dir("loss", pct(c.AtoB.LossPercent), pct(c.BtoA.LossPercent))
	if c.FWRules > 0 {
		s = append(s, fmt.Sprintf("--fw-rules %d", c.FWRules))
	}
	if c.MTUA == c.MTUB {
		s = append(s, fmt.Sprintf("--mtu %d", c.MTUA))
	} else {
		s = append(s, fmt.Sprintf("--mtu-a %d --mtu-b %d", c.MTUA, c.MTUB))
	}
	if c.Delay > 0 {
		s = append(s, "--delay "+c.Delay.String())
	}
	if c.Jitter > 0 {
		s = append(s, "--jitter "+c.Jitter.String())
	}
	r := c.Relay
	if c.DUT == DUTRelay {
		if r.Delay > 0 {
			s = append(s, "--delay "+r.Delay.String())
		}
		if r.Jitter > 0 {
			s = append(s, "--jitter "+r.Jitter.String())
		}
		if r.LossPercent > 0 {
			s = append(s, "--loss "+pct(r.LossPercent))
		}
		if r.ReorderPercent > 0 {
			s = append(s, "--reorder "+pct(r.ReorderPercent)+" --reorder-gap "+r.ReorderGap.String())
		}
		if r.DuplicatePercent > 0 {
			s = append(s, "--duplicate "+pct(r.DuplicatePercent))
		}
	}
	if c.NoRPS {
		s = append(s, "--no-rps")
	}
	return strings.Join(s, " ")
}

// Summary is a one-line description of c for people, e.g.
// "MTU 1500, shaped to 50mbit".
func (c Config) Summary() string {
	var parts []string
	mtuA, mtuB := c.MTUA, c.MTUB
	if mtuA == 0 {
		mtuA = DefaultMTU
	}
	if mtuB == 0 {
		mtuB = DefaultMTU
	}
	if mtuA == mtuB {
		parts = append(parts, fmt.Sprintf("MTU %d", mtuA))
	} else {
		parts = append(parts, fmt.Sprintf("MTU %d/%d", mtuA, mtuB))
	}
	if c.AtoB.RateBps > 0 {
		sh := "shaped to " + FormatRate(c.AtoB.RateBps)
		if c.AtoB.LimitPackets > 0 {
			sh += fmt.Sprintf(" over a %d-packet queue", c.AtoB.LimitPackets)
		}
		parts = append(parts, sh)
	} else {
		parts = append(parts, "not shaped")
	}
	if c.AtoB.LossPercent > 0 {
		parts = append(parts, fmt.Sprintf("%g%% loss", c.AtoB.LossPercent))
	}
	if c.FWRules > 0 {
		parts = append(parts, fmt.Sprintf("%d firewall rules", c.FWRules))
	}
	if c.Queues > 1 {
		parts = append(parts, fmt.Sprintf("%d queues per veth", c.Queues))
	}
	sort.Strings(parts[1:])
	return strings.Join(parts, ", ")
}

// TesterCPU is the CPU for the tester's sending threads on the lab, 1-based
// as trials.Config.TxCPU: the first one the lab's DUT does not use. veth
// forwarding runs on the sending CPU, so a sender on the DUT's CPU competes
// with the forwarding it measures. 0 (not pinned) when the DUT has no CPUs
// of its own or every CPU is the DUT's.
func (st *State) TesterCPU() int {
	if len(st.DUTCPUs) == 0 {
		return 0
	}
	for c := range runtime.NumCPU() {
		if !slices.Contains(st.DUTCPUs, c) {
			return c + 1
		}
	}
	return 0
}
