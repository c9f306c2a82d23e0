package agent

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rfc2544/rfc2544/internal/rate"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// CheckResult is what Check learned of an agent.
type CheckResult struct {
	Addr      string         // the agent's address, with its port
	Handshake time.Duration  // the authentication's round trips
	Info      wire.AgentInfo // what the agent said of itself and its limits
}

// Check connects to the agent at addr as a controller would, authenticates
// with token, waits for one keepalive each way (the keyed session works)
// and disconnects: a quick test of the address, the port, the firewall and
// the token.
func Check(ctx context.Context, addr string, token []byte, software string) (CheckResult, error) {
	start := time.Now()
	c, err := Dial(ctx, addr, token, DialConfig{Software: software})
	if err != nil {
		return CheckResult{}, err
	}
	defer c.Close()
	r := CheckResult{Addr: JoinHostPort(addr), Handshake: time.Since(start), Info: c.Info()}
	select {
	case <-time.After(time.Duration(r.Info.KeepaliveInterval) + 100*time.Millisecond):
	case <-c.Done():
	case <-ctx.Done():
	}
	if err := c.Err(); err != nil {
		return r, fmt.Errorf("session: %w", err)
	}
	return r, nil
}

// WriteText writes the result for a person: the agent, its software, whom
// it sends to, its limits, its latency mode and its timeouts.
func (r CheckResult) WriteText(w io.Writer) error {
	i := r.Info
	latency := "round trip (clocks not declared synchronized)"
	if i.ClockSync == ClockPTP {
		latency = "one-way allowed (agent declares PTP-synchronized clocks)"
	}
	_, err := fmt.Fprintf(w, `agent %s: authenticated (both sides proved the token) in %v
  software:      %s
  sends only to: %s (this controller, as the agent sees it)
  max rate:      %s
  max trial:     %v
  latency:       %s
  timeouts:      keepalive %v, peer %v, idle %v, session %v
`, r.Addr, r.Handshake.Round(time.Microsecond), i.Software, i.PeerAddr, rate.Format(i.MaxRateBps), time.Duration(i.MaxDuration), latency,
		time.Duration(i.KeepaliveInterval), time.Duration(i.PeerTimeout), time.Duration(i.IdleTimeout), time.Duration(i.SessionTimeout))
	return err
}
