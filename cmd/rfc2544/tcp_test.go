package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
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
		{"both through an agent, windows", []string{"tcp", "--agent", "198.18.0.2", "--token-file", "/nonexistent", "--both", "--window", "16m", "--streams", "3"},
			[]string{"--both --window", "both transfers together", "smaller --window"}},
		{"both through an agent, no token", []string{"tcp", "--agent", "198.18.0.2", "--token-file", "/nonexistent", "--both"}, []string{"--token-file", "/nonexistent"}},
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

// writeTCPPlan writes a plan file with body in a temporary folder.
func writeTCPPlan(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tcp.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTCPDryRunPlan: 'rfc2544 tcp --plan FILE --dry-run' prints the
// effective test, the plan's tcp section with the flags given on top, as a
// plan file that reads back to the same test, and sends nothing.
func TestTCPDryRunPlan(t *testing.T) {
	plan := writeTCPPlan(t, "tcp:\n  bottleneck: 100mbit\n  window: 256k\n  streams: 2\n  duration: 5s\n  direction: both\n")
	ends := []string{"--src", "198.18.0.1", "--dst", "198.18.0.2"}
	out, _, err := runCLI(t, context.Background(), append([]string{"tcp", "--plan", plan, "--dry-run"}, ends...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"nothing was created or sent", "198.18.0.1 and 198.18.0.2", "bottleneck A to B: 100mbit, given", "bottleneck B to A: 100mbit, given",
		"window 256k per connection, 2 connections, as given", "5s transfer each way at once",
		"tcp:\n", "bottleneck: 100mbit", "window: 256k", "streams: 2", "duration: 5s", "direction: both"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
	// The output is a plan file: read back, it gives the same test.
	again, _, err := runCLI(t, context.Background(), append([]string{"tcp", "--plan", writeTCPPlan(t, out), "--dry-run"}, ends...)...)
	if err != nil {
		t.Fatal(err)
	}
	if again != out {
		t.Errorf("the dry run read back as a plan differs:\n%s\nfirst:\n%s", again, out)
	}
	// Flags override the plan.
	out, _, err = runCLI(t, context.Background(), append([]string{"tcp", "--plan", plan, "--dry-run", "--streams", "3", "--reverse", "--json"}, ends...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Bottleneck []string           `json:"bottleneck"`
		TCP        rfc2544.TCPSection `json:"tcp"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	want := rfc2544.TCPSection{Bottleneck: "100mbit", Window: "256k", Streams: 3, Duration: rfc2544.Duration(5 * time.Second), Direction: "b-to-a"}
	if got.TCP != want || len(got.Bottleneck) != 1 || !strings.HasPrefix(got.Bottleneck[0], "B to A") {
		t.Errorf("flags over the plan: got %+v %q, want %+v and B to A only", got.TCP, got.Bottleneck, want)
	}
}

// TestTCPDryRunTemporaryLab: a dry run on a temporary lab says what lab it
// would build and the bottleneck its shaper sets, and builds nothing (it
// needs no root).
func TestTCPDryRunTemporaryLab(t *testing.T) {
	out, _, err := runCLI(t, context.Background(), "tcp", "--lab", "--dut", "relay", "--rate", "100mbit", "--delay", "10ms", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"nothing was created or sent", "a temporary lab", "created and removed", "bottleneck A to B: " + formatBitRate(100e6) + ", the lab's shaper",
		"window and connections sized from the BDP", "direction: a-to-b"} {
		if !strings.Contains(out, w) {
			t.Errorf("dry run lacks %q:\n%s", w, out)
		}
	}
}

// TestTCPBadPlan: a bad tcp section is a usage error naming the plan's
// field and the fix, before anything is built or sent.
func TestTCPBadPlan(t *testing.T) {
	ends := []string{"--src", "198.18.0.1", "--dst", "198.18.0.2", "--dry-run"}
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"window", "tcp:\n  window: lots\n", []string{"tcp.window", "lots", "256k"}},
		{"bottleneck", "tcp:\n  bottleneck: 50mbps\n", []string{"tcp.bottleneck", "50mbps", "search"}},
		{"line rate", "tcp:\n  bottleneck: search\n  line_rate: fast\n", []string{"tcp.line_rate", "10G"}},
		{"direction", "tcp:\n  bottleneck: 1G\n  direction: sideways\n", []string{"tcp.direction", "a-to-b, b-to-a or both"}},
		{"streams", "tcp:\n  bottleneck: 1G\n  streams: -2\n", []string{"tcp.streams", "-2"}},
		{"duration", "tcp:\n  bottleneck: 1G\n  duration: 10\n", []string{"duration", "10s"}},
		{"unknown field", "tcp:\n  bottleneck: 1G\n  windw: 64k\n", []string{"windw", "window"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"tcp", "--plan", writeTCPPlan(t, tc.body)}, ends...)
			var out strings.Builder
			err := run(context.Background(), args, &out, io.Discard)
			if err == nil {
				t.Fatalf("accepted:\n%s", out.String())
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
