package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to 'rfc2544 tcp --agent' is a usage error naming the flag and
// the fix, before the agent is dialled.
func TestTCPAgentBadInput(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ag := []string{"tcp", "--agent", "198.19.1.2", "--token-file", tok}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"token without agent", []string{"tcp", "--token-file", tok}, []string{"apply with --agent HOST[:PORT]"}},
		{"agent and lab", append(ag, "--lab"), []string{"--agent and --lab"}},
		{"agent and src", append(ag, "--src", "198.18.0.1"), []string{"--agent and --lab or --src/--dst"}},
		{"agent name", []string{"tcp", "--agent", "agent.example", "--token-file", tok}, []string{"--agent agent.example", "IP address"}},
		{"no token", []string{"tcp", "--agent", "198.19.1.2"}, []string{"--token-file FILE is required"}},
		{"outside the benchmark range", []string{"tcp", "--agent", "10.1.2.3", "--token-file", tok}, []string{"RFC 6815"}},
		{"streams", append(ag, "--streams", "100"), []string{"--streams 100", "at most 64"}},
		{"window", append(ag, "--window", "32m"), []string{"--window 33554432", "more --streams"}},
		{"window total", append(ag, "--window", "16m", "--streams", "8"), []string{"--window 16777216 × --streams 8"}},
		{"bb", append(ag, "--bb", "fast"), []string{"--bb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("accepted")
			}
			if got := exitCode(err, io.Discard); got != exitUsage {
				t.Errorf("exit code %d, want %d (usage) for: %v", got, exitUsage, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}
