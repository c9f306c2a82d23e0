package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// Bad input to 'rfc2544 tcp' is a usage error naming the flag and the fix,
// before any lab is built or byte sent.
func TestTCPBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no ends", []string{"tcp"}, []string{"--lab", "--src and --dst"}},
		{"lab and addresses", []string{"tcp", "--lab", "--src", "198.18.0.1"}, []string{"--lab and --src/--dst"}},
		{"bad window", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--window", "lots"}, []string{"--window", "256k"}},
		{"bad bb", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "50mbps"}, []string{"--bb"}},
		{"no bb", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2"}, []string{"--bb RATE", "--bb search"}},
		{"both and reverse", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--both", "--reverse"}, []string{"--both and --reverse"}},
		{"both through an agent", []string{"tcp", "--agent", "198.18.0.2", "--token-file", "/nonexistent", "--both"}, []string{"--both", "not through an agent", "--reverse"}},
		{"bad line rate", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "search", "--line-rate", "fast"}, []string{"--line-rate", "10G"}},
		{"line rate without search", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--line-rate", "10G"}, []string{"--line-rate", "search only"}},
		{"outside the benchmark range", []string{"tcp", "--src", "10.0.0.1", "--dst", "10.0.0.2", "--bb", "1G"}, []string{"10.0.0.1", "RFC 6815"}},
		{"mixed families", []string{"tcp", "--src", "198.18.0.1", "--dst", "2001:2::1", "--bb", "1G"}, []string{"both IPv4 or both IPv6"}},
		{"streams", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--streams", "1000"}, []string{"streams 1000"}},
		{"duration", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--duration", "0s"}, []string{"--duration"}},
		{"out not a folder", []string{"tcp", "--src", "198.18.0.1", "--dst", "198.18.0.2", "--bb", "1G", "--out", "/dev/null/report"}, []string{"--out", "folder"}},
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
