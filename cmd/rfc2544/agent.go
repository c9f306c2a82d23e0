package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent"
)

const agentHelp = `Usage: rfc2544 agent --token-file FILE [--listen ADDR[:PORT]] [--max-rate RATE] [--max-duration D] [--clock-sync none|ptp]
       rfc2544 agent --check HOST[:PORT] --token-file FILE

rfc2544 agent runs on the far host of a path (a cloud VM, a host behind a VPN)
as tester port B: it receives the controller's test traffic and sends the
reverse streams. The controller ('rfc2544 run --agent HOST') runs the search
and, per trial, tells the agent what to expect over one TCP connection.

Security: the controller must prove it holds the shared token (a file, never
a command-line argument: readable by its owner only, at least 16 bytes).
The agent sends test traffic only to the controller's own address, never
faster than --max-rate, never longer than --max-duration per trial, to one
controller at a time, and stops within 2 s of losing it. Failed
authentications are logged and rate-limited per address. Sessions (peer,
auth ok or failed, trials, why they ended) are logged to stderr. The agent
runs until Ctrl-C.

--check connects to an agent as a controller would, authenticates, prints the
agent's limits and disconnects: a quick test of the address, the port, the
firewall and the token.

Latency across hosts is round trip unless both hosts' clocks are synchronized
and the agent says so with --clock-sync ptp; reports state which.

Examples:
  # make a token, copy it to the controller host the same way (scp, then chmod 600)
  head -c 32 /dev/urandom | base64 > agent.token && chmod 600 agent.token
  # on the far host: listen on the test interface's address
  rfc2544 agent --listen 198.19.1.2 --token-file agent.token --max-rate 2G
  # on the controller host: check the agent answers and the token matches
  rfc2544 agent --check 198.19.1.2 --token-file agent.token

Without --listen the agent listens on 127.0.0.1:2544 only (e.g. behind an ssh
tunnel); give the address of the interface controllers reach. Every interface
(0.0.0.0 or ::) must be written out.

Running without privilege: the agent needs no root and no capability. Its test
traffic uses ordinary UDP sockets and its control port (2544) is above 1024,
so run it as any unprivileged user that can read the token file:
  sudo -u rfc2544 rfc2544 agent --listen 198.19.1.2 --token-file /etc/rfc2544/agent.token
Socket buffers larger than net.core.rmem_max/wmem_max are then capped by the
kernel (raise those sysctls for high rates). Under systemd, DynamicUser= runs
it as a transient user, and LoadCredential= hands it the token (%d is the
credentials directory) without making the original file readable by that user:
  [Service]
  ExecStart=/usr/local/bin/rfc2544 agent --listen 198.19.1.2 --max-rate 2G --token-file %d/agent.token
  LoadCredential=agent.token:/etc/rfc2544/agent.token
  DynamicUser=yes
  NoNewPrivileges=yes
  ProtectSystem=strict
  ProtectHome=yes
  PrivateTmp=yes
  RestrictAddressFamilies=AF_INET AF_INET6 AF_NETLINK
  CapabilityBoundingSet=
  Restart=on-failure
The token file must be a regular file, mode 600 (or 400), owned by the user
reading it; a named pipe, a device or a directory is refused.

Limits a controller cannot exceed: frames of 64 (IPv4) or 84 (IPv6) to 9216
bytes, at most 8 streams and 64 flows per trial, learning frames included in
--max-rate. Unauthenticated peers get 2 handshakes at once per address (8 in
all), 3 s each, every attempt counted against the address; refusals are logged
at most once a second. See trials/agent/PROTOCOL.md for the threat model.

Flags:
`

func agentVerb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	af := agent.AddFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printVerbHelp(stdout, agentHelp, fs)
		return nil
	}
	if err != nil {
		return usagef("agent: %v; run 'rfc2544 agent --help' for the flags", err)
	}
	if len(pos) > 0 {
		return usagef("agent: unexpected argument %q: the agent takes only flags; run 'rfc2544 agent --help'", pos[0])
	}
	token, err := af.Token()
	if err != nil {
		return usagef("agent: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if check, err := af.CheckAddr(); err != nil || check != "" {
		if err != nil {
			return usagef("agent: %w", err)
		}
		return agentCheck(ctx, check, token, stdout, logger)
	}
	cfg, addr, err := af.Config()
	if err != nil {
		return usagef("agent: %w", err)
	}
	cfg.Token, cfg.Traffic, cfg.Software, cfg.Logger = token, &agent.UDPTraffic{}, "rfc2544", logger
	srv, err := agent.NewServer(cfg)
	if err != nil {
		return usagef("agent: %v", err)
	}
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		return fmt.Errorf("agent: listen on %s: %w", addr, err)
	}
	switch {
	case !af.ListenGiven():
		logger.Info("listening on " + ln.Addr().String() + " (loopback only: the default; pass --listen ADDR of the interface controllers reach)")
	case addr.Addr().IsUnspecified():
		logger.Warn("listening on every interface (" + ln.Addr().String() + "): any host that reaches this one can try the token; prefer the test interface's address")
	default:
		logger.Info("listening on " + ln.Addr().String())
	}
	p := cfg.Policy
	logger.Info("policy", "max_rate", formatBitRate(p.MaxRateBps), "max_duration", p.MaxDuration, "clock_sync", p.ClockSync,
		"idle_timeout", cfg.IdleTimeout, "max_session", cfg.SessionTimeout)
	err = srv.Serve(ctx, ln)
	logger.Info("agent stopped")
	return err
}

// agentCheck authenticates to an agent and prints what it said
// (agent.Check).
func agentCheck(ctx context.Context, addr string, token []byte, stdout io.Writer, logger *slog.Logger) error {
	r, err := agent.Check(ctx, addr, token, "rfc2544 agent --check")
	if r.Addr != "" {
		logger.Info("auth ok", "agent", r.Addr, "handshake", r.Handshake.Round(time.Microsecond))
	}
	if err != nil {
		return fmt.Errorf("agent --check: %w", err)
	}
	return r.WriteText(stdout)
}
