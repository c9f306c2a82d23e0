package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent"
)

// tokenFile writes a token file with the given mode.
func tokenFile(t *testing.T, mode os.FileMode, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

const testToken = "dGVzdC10b2tlbi1mb3ItdGhlLWFnZW50LXZlcmI=\n"

func TestAgentBadInput(t *testing.T) {
	good := tokenFile(t, 0o600, testToken)
	open := tokenFile(t, 0o644, testToken)
	short := tokenFile(t, 0o600, "abc\n")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no token file", []string{"agent"}, []string{"--token-file: required", "head -c 32 /dev/urandom"}},
		{"token file readable by others", []string{"agent", "--token-file", open}, []string{"--token-file", "mode 0644", "chmod 600"}},
		{"short token", []string{"agent", "--token-file", short}, []string{"--token-file", "3 bytes, shorter than the minimum 16"}},
		{"missing token file", []string{"agent", "--token-file", "/nonexistent/agent.token"}, []string{"--token-file", "no such file"}},
		{"token on the command line", []string{"agent", "--token", "secret"}, []string{"flag provided but not defined: -token"}},
		{"listen without address", []string{"agent", "--token-file", good, "--listen", ":2544"}, []string{`--listen ":2544"`, "no address", "0.0.0.0:2544 for every interface"}},
		{"listen host name", []string{"agent", "--token-file", good, "--listen", "agent.example:2544"}, []string{`"agent.example" is not an IP address`}},
		{"listen bad port", []string{"agent", "--token-file", good, "--listen", "127.0.0.1:99999"}, []string{`port "99999": want 1 to 65535`}},
		{"listen port zero", []string{"agent", "--token-file", good, "--listen", "127.0.0.1:0"}, []string{`port "0"`}},
		{"bad max rate", []string{"agent", "--token-file", good, "--max-rate", "fast"}, []string{`--max-rate "fast": not a bit rate`}},
		{"bad max duration", []string{"agent", "--token-file", good, "--max-duration", "10"}, []string{"max-duration", `"10" has no unit`}},
		{"zero max duration", []string{"agent", "--token-file", good, "--max-duration", "0s"}, []string{"--max-duration 0s: must be positive"}},
		{"bad clock sync", []string{"agent", "--token-file", good, "--clock-sync", "gps"}, []string{`--clock-sync "gps": want none`, "ptp"}},
		{"zero idle timeout", []string{"agent", "--token-file", good, "--idle-timeout", "0s"}, []string{"--idle-timeout 0s: must be positive"}},
		{"positional argument", []string{"agent", "--token-file", good, "198.19.1.2"}, []string{`unexpected argument "198.19.1.2"`}},
		{"check with listen", []string{"agent", "--token-file", good, "--check", "127.0.0.1", "--listen", "127.0.0.1"}, []string{"--listen: applies to a running agent, not to --check"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestAgentHelp(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"agent", "--help"}, &stdout, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Examples:", "rfc2544 agent --listen 198.19.1.2 --token-file agent.token", "rfc2544 agent --check",
		"chmod 600", "-max-rate", "127.0.0.1:2544 (loopback only)", "round trip",
		"needs no root", "DynamicUser=yes", "LoadCredential=agent.token:", "a named pipe, a device or a directory is refused"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("help does not say %q", w)
		}
	}
}

// lockedBuf is a log sink for the agent's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAgentCheck runs the agent verb on loopback and checks it with
// --check, then with a wrong token; Ctrl-C (ctx) stops the agent cleanly.
func TestAgentCheck(t *testing.T) {
	tok := tokenFile(t, 0o600, testToken)
	wrong := tokenFile(t, 0o600, "another-token-0123456789abcdef\n")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var agentLog lockedBuf
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"agent", "--listen", addr, "--token-file", tok, "--max-rate", "2.5G", "--clock-sync", "ptp"}, new(bytes.Buffer), &agentLog)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(agentLog.String(), "listening on") {
		if time.Now().After(deadline) {
			t.Fatalf("agent not listening after 5 s; log:\n%s", agentLog.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	var out, clog bytes.Buffer
	if err := run(context.Background(), []string{"agent", "--check", addr, "--token-file", tok}, &out, &clog); err != nil {
		t.Fatalf("--check: %v\n%s", err, clog.String())
	}
	for _, w := range []string{"authenticated (both sides proved the token)", "sends only to: 127.0.0.1", "max rate:      2.5 Gbit/s",
		"one-way allowed", "max trial:     10m0s"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("--check output does not say %q:\n%s", w, out.String())
		}
	}
	err = run(context.Background(), []string{"agent", "--check", addr, "--token-file", wrong}, &out, &clog)
	if err == nil || !strings.Contains(err.Error(), "the controller's token does not match the agent's --token-file") {
		t.Errorf("--check with a wrong token: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agent after Ctrl-C: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("agent still running 5 s after Ctrl-C")
	}
	l := agentLog.String()
	for _, w := range []string{"listening on " + addr, `max_rate="2.5 Gbit/s"`, "clock_sync=ptp", "auth ok: session started",
		`controller="rfc2544 agent --check"`, "handshake failed", "wrong token", "agent stopped"} {
		if !strings.Contains(l, w) {
			t.Errorf("agent log does not say %q:\n%s", w, l)
		}
	}
}

func TestParseListen(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"default", "", "127.0.0.1:2544"},
		{"address only", "198.19.1.2", "198.19.1.2:2544"},
		{"address and port", "198.19.1.2:3000", "198.19.1.2:3000"},
		{"ipv6", "2001:2::2", "[2001:2::2]:2544"},
		{"ipv6 bracketed", "[2001:2::2]", "[2001:2::2]:2544"},
		{"ipv6 with port", "[2001:2::2]:3000", "[2001:2::2]:3000"},
		{"every interface, written out", "0.0.0.0:2544", "0.0.0.0:2544"},
		{"every ipv6 interface, written out", "[::]:2544", "[::]:2544"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := agent.ParseListen(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("ParseListen(%q) = %v, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestAgentTokenFIFO (issue 17 item 5): --token-file naming a FIFO used to
// hang the agent's startup forever (deaf to SIGTERM); it is refused at once.
func TestAgentTokenFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "agent.token")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- run(context.Background(), []string{"agent", "--token-file", fifo}, &stdout, &stderr)
	}()
	select {
	case err := <-done:
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "a named pipe (FIFO), not a regular file") {
			t.Errorf("error %v, want a usage error saying the token file is a FIFO", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("agent --token-file FIFO still starting after 5 s")
	}
}
