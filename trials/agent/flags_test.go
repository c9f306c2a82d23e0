package agent

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parseFlags parses args as the agent's flags.
func parseFlags(t *testing.T, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	return f, fs.Parse(args)
}

// TestFlagsConfig: the defaults are the package's, every setting reaches
// the Config, and --max-rate reads the module's rate grammar.
func TestFlagsConfig(t *testing.T) {
	f, err := parseFlags(t)
	if err != nil {
		t.Fatal(err)
	}
	cfg, addr, err := f.Config()
	if err != nil || addr.String() != DefaultListen || cfg.Policy.MaxRateBps != 1e9 || cfg.Policy.MaxDuration != DefaultMaxDuration ||
		cfg.Policy.ClockSync != ClockNone || cfg.IdleTimeout != DefaultIdleTimeout || cfg.SessionTimeout != DefaultSessionTimeout || f.ListenGiven() {
		t.Errorf("defaults: %+v, %v, %v", cfg, addr, err)
	}
	for in, want := range map[string]float64{"10G": 10e9, "2.5G": 2.5e9, "100M": 100e6, "1000000000": 1e9, "10Gbit/s": 10e9,
		"800kbit": 800e3, "50Mbit/s": 50e6, "50mbit": 50e6, "40g": 40e9, "1e9": 1e9} {
		f, err := parseFlags(t, "--max-rate", in, "--listen", "198.19.1.2", "--clock-sync", "ptp", "--max-duration", "1m", "--idle-timeout", "5s", "--max-session", "1h")
		if err != nil {
			t.Fatal(err)
		}
		cfg, addr, err := f.Config()
		if err != nil || cfg.Policy.MaxRateBps != want || addr.String() != "198.19.1.2:2544" || cfg.Policy.ClockSync != ClockPTP ||
			cfg.Policy.MaxDuration != time.Minute || cfg.IdleTimeout != 5*time.Second || cfg.SessionTimeout != time.Hour || !f.ListenGiven() {
			t.Errorf("--max-rate %s: %+v, %v, %v; want %g bit/s", in, cfg, addr, err, want)
		}
	}
}

// TestFlagsErrors: each bad setting names its flag, the value and the fix.
func TestFlagsErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"listen without address", []string{"--listen", ":2544"}, `--listen ":2544": no address`},
		{"bad max rate", []string{"--max-rate", "fast"}, `--max-rate "fast": not a bit rate`},
		{"zero max duration", []string{"--max-duration", "0s"}, "--max-duration 0s: must be positive, e.g. 10m"},
		{"bad clock sync", []string{"--clock-sync", "gps"}, `--clock-sync "gps": want none`},
		{"zero idle timeout", []string{"--idle-timeout", "0s"}, "--idle-timeout 0s: must be positive"},
		{"zero max session", []string{"--max-session", "0s"}, "--max-session 0s: must be positive"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseFlags(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.Config(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	for in, want := range map[string]string{"10": `"10" has no unit; write it like 10s or 10ms`, "soon": `"soon" is not a duration`, "-1s": `"-1s" is negative`} {
		if _, err := parseFlags(t, "--max-duration", in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--max-duration %s: %v, want %q", in, err, want)
		}
	}
}

// TestFlagsTokenAndCheck: the token file is required and read; --check
// refuses the settings of a running agent.
func TestFlagsTokenAndCheck(t *testing.T) {
	f, _ := parseFlags(t)
	if _, err := f.Token(); err == nil || !strings.Contains(err.Error(), "--token-file: required; make a token with") {
		t.Errorf("no token file: %v", err)
	}
	tok := filepath.Join(t.TempDir(), "agent.token")
	if err := os.WriteFile(tok, []byte("c2VjcmV0LXRva2VuLWZvci10ZXN0cy0xMjM0NTY3OA==\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ = parseFlags(t, "--token-file", tok, "--check", "127.0.0.1")
	if b, err := f.Token(); err != nil || len(b) < MinTokenLen {
		t.Errorf("Token = %d bytes, %v", len(b), err)
	}
	if addr, err := f.CheckAddr(); addr != "127.0.0.1" || err != nil {
		t.Errorf("CheckAddr = %q, %v", addr, err)
	}
	f, _ = parseFlags(t, "--check", "127.0.0.1", "--max-rate", "2G")
	if _, err := f.CheckAddr(); err == nil || err.Error() != "--max-rate: applies to a running agent, not to --check" {
		t.Errorf("--check with --max-rate: %v", err)
	}
	if f, _ = parseFlags(t); mustCheckAddr(t, f) != "" {
		t.Error("CheckAddr without --check is not empty")
	}
}

func mustCheckAddr(t *testing.T, f *Flags) string {
	t.Helper()
	a, err := f.CheckAddr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}
