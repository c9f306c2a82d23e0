package agent

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/rfc2544/rfc2544/internal/quote"
	"github.com/rfc2544/rfc2544/internal/rate"
)

// Flags are an agent's settings as command-line flags, the way 'rfc2544
// agent' takes them (in the manner of lab.Flags): AddFlags registers them,
// Token reads the token file, CheckAddr is --check, Config checks the rest
// into a server's Config. Errors name the flag, the value and the fix.
type Flags struct {
	fs                                       *flag.FlagSet
	listen, tokenFile, maxRate, clock, check string
	maxDuration, idle, maxSession            durationFlag
}

// AddFlags registers the agent's flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs, maxDuration: durationFlag{DefaultMaxDuration}, idle: durationFlag{DefaultIdleTimeout}, maxSession: durationFlag{DefaultSessionTimeout}}
	fs.StringVar(&f.listen, "listen", "", "listen on `ADDR[:PORT]`, an IP address of this host (port 2544 if omitted); default "+DefaultListen+" (loopback only)")
	fs.StringVar(&f.tokenFile, "token-file", "", "read the shared token from `FILE` (mode 600, at least 16 bytes); required")
	fs.StringVar(&f.maxRate, "max-rate", "1G", "cap on what the agent sends, in L1 `bits/s` summed over its streams (e.g. 500M, 2.5G)")
	fs.Var(&f.maxDuration, "max-duration", "longest trial the agent accepts (learning, traffic and settle)")
	fs.StringVar(&f.clock, "clock-sync", "none", "clock synchronization of the two hosts: none (round-trip latency) or ptp (one-way allowed)")
	fs.Var(&f.idle, "idle-timeout", "end a session with no trial for this long")
	fs.Var(&f.maxSession, "max-session", "end any session this long after it started")
	fs.StringVar(&f.check, "check", "", "connect to the agent at `HOST[:PORT]` as a controller, print its limits and exit")
	return f
}

func (f *Flags) set() map[string]bool {
	m := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { m[fl.Name] = true })
	return m
}

// Token reads the token of --token-file (LoadToken).
func (f *Flags) Token() ([]byte, error) {
	if f.tokenFile == "" {
		return nil, errors.New("--token-file: required; make a token with: head -c 32 /dev/urandom | base64 > agent.token && chmod 600 agent.token")
	}
	t, err := LoadToken(f.tokenFile)
	if err != nil {
		return nil, fmt.Errorf("--token-file: %v", err)
	}
	return t, nil
}

// CheckAddr is --check: the agent to check as a controller would (Check),
// or "" to run an agent. The settings of a running agent are refused with
// it.
func (f *Flags) CheckAddr() (string, error) {
	if f.check == "" {
		return "", nil
	}
	set := f.set()
	for _, n := range []string{"listen", "max-rate", "max-duration", "clock-sync", "idle-timeout", "max-session"} {
		if set[n] {
			return "", fmt.Errorf("--%s: applies to a running agent, not to --check", n)
		}
	}
	return f.check, nil
}

// ListenGiven reports whether --listen was given (else the agent listens
// on DefaultListen, loopback only).
func (f *Flags) ListenGiven() bool { return f.set()["listen"] }

// Config checks the settings of a running agent: the address to listen
// on, and a Config with its Policy and timeouts (Token, Traffic, Software
// and Logger are the caller's).
func (f *Flags) Config() (Config, netip.AddrPort, error) {
	addr, err := ParseListen(f.listen)
	if err != nil {
		return Config{}, addr, fmt.Errorf("--listen %q: %v", f.listen, err)
	}
	bps, err := rate.ParseBits(f.maxRate)
	if err != nil {
		return Config{}, addr, fmt.Errorf("--max-rate %s: %w", quote.Short(f.maxRate), err)
	}
	if f.maxDuration.d <= 0 {
		return Config{}, addr, fmt.Errorf("--max-duration %v: must be positive, e.g. 10m", f.maxDuration.d)
	}
	cs := ClockSync(f.clock)
	if cs != ClockNone && cs != ClockPTP {
		return Config{}, addr, fmt.Errorf("--clock-sync %q: want none (round-trip latency) or ptp (the hosts' clocks are PTP-synchronized)", f.clock)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"idle-timeout", f.idle.d}, {"max-session", f.maxSession.d}} {
		if d.d <= 0 {
			return Config{}, addr, fmt.Errorf("--%s %v: must be positive", d.name, d.d)
		}
	}
	return Config{Policy: Policy{MaxRateBps: bps, MaxDuration: f.maxDuration.d, ClockSync: cs},
		IdleTimeout: f.idle.d, SessionTimeout: f.maxSession.d}, addr, nil
}

// durationFlag is a duration flag that quotes a bad value in its error and
// refuses negative values.
type durationFlag struct{ d time.Duration }

func (f *durationFlag) String() string {
	if f == nil {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return fmt.Errorf("%s has no unit; write it like %ss or %sms", quote.Short(s), s, s)
		}
		return fmt.Errorf("%s is not a duration; write it like 60s, 500ms or 2m", quote.Short(s))
	}
	if d < 0 {
		return fmt.Errorf("%s is negative; give a positive duration such as 60s", quote.Short(s))
	}
	f.d = d
	return nil
}
