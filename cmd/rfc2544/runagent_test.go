package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAgentBadInput: every bad --agent setting gets its own usage error
// before any tester is opened (so before any connection or frame).
func TestRunAgentBadInput(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lax := filepath.Join(dir, "lax.token")
	if err := os.WriteFile(lax, []byte("0123456789abcdef0123456789abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--tests", "throughput", "--profile", "quick"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "no token file", args: []string{"--agent", "198.19.1.2"}, want: []string{"--token-file FILE is required"}},
		{name: "missing token file", args: []string{"--agent", "198.19.1.2", "--token-file", filepath.Join(dir, "none")}, want: []string{"--token-file", "none"}},
		{name: "lax token file", args: []string{"--agent", "198.19.1.2", "--token-file", lax}, want: []string{"--token-file", "chmod 600"}},
		{name: "host name", args: []string{"--agent", "agent.example", "--token-file", tok}, want: []string{"--agent agent.example", "IP address"}},
		{name: "bad port", args: []string{"--agent", "198.19.1.2:99999", "--token-file", tok}, want: []string{"--agent 198.19.1.2:99999", "port"}},
		{name: "outside RFC 6815", args: []string{"--agent", "192.0.2.1", "--token-file", tok}, want: []string{"--agent 192.0.2.1", "RFC 6815", "--allow-any-destination"}},
		{name: "outside RFC 6815 v6", args: []string{"--agent", "[2001:db8::1]:2544", "--token-file", tok, "--ipv6"}, want: []string{"--agent [2001:db8::1]:2544", "RFC 6815"}},
		{name: "family mismatch", args: []string{"--agent", "198.19.1.2", "--token-file", tok, "--ipv6"}, want: []string{"IPv4 address", "IPv6"}},
		{name: "bad local", args: []string{"--agent", "198.19.1.2", "--token-file", tok, "--local", "nope"}, want: []string{"--local \"nope\""}},
		{name: "other transport", args: []string{"--agent", "198.19.1.2", "--token-file", tok, "--transport", "raw"}, want: []string{"--transport raw", "drop --transport"}},
		{name: "with a lab", args: []string{"--agent", "198.19.1.2", "--token-file", tok, "--lab"}, want: []string{"drop --lab"}},
		{name: "reverse without agent", args: []string{"--transport", "sim", "--reverse"}, want: []string{"--reverse", "add --agent"}},
		{name: "clock sync without agent", args: []string{"--transport", "sim", "--clock-sync", "ptp"}, want: []string{"--clock-sync", "add --agent"}},
		{name: "clock sync unknown", args: []string{"--agent", "198.19.1.2", "--token-file", tok, "--clock-sync", "gps"}, want: []string{`--clock-sync "gps"`, "none", "ptp"}},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opens := forbidTraffic(t)
			_, _, err := runCLI(t, context.Background(), append(append([]string{}, base...), tt.args...)...)
			if err == nil {
				t.Fatalf("no error for %q", tt.args)
			}
			if got := exitCode(err, io.Discard); got != exitUsage {
				t.Errorf("exit code %d, want %d (usage) for: %v", got, exitUsage, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if *opens != 0 {
				t.Errorf("a tester was opened %d times for bad input", *opens)
			}
			if other, dup := seen[err.Error()]; dup {
				t.Errorf("same error as case %q: %v", other, err)
			}
			seen[err.Error()] = tt.name
		})
	}
}
