package agenttest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
)

// Serve starts a real agent (UDP traffic) whose control listener and test
// sockets live in network namespace ns ("" for this one), listening on addr
// at a free port, and returns the control address. It stops at the end of
// the test.
func Serve(t testing.TB, ns string, addr netip.Addr, token []byte, policy agent.Policy) string {
	t.Helper()
	srv, err := agent.NewServer(agent.Config{
		Token:   token,
		Traffic: &agent.UDPTraffic{Config: trials.RemotePort{Namespace: ns}},
		Policy:  policy,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := nsutil.Do(ns, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}
