package agent

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good := "c2VjcmV0LXRva2VuLWZvci10ZXN0cy0xMjM0NTY3OA=="
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		dir     bool
		want    string // token, or the error's text
		wantErr bool
	}{
		{name: "ok", content: good + "\n", mode: 0o600, want: good},
		{name: "owner read only", content: good, mode: 0o400, want: good},
		{name: "group readable", content: good, mode: 0o640, wantErr: true, want: "mode 0640 lets group or others access it; run chmod 600"},
		{name: "world readable", content: good, mode: 0o604, wantErr: true, want: "mode 0604"},
		{name: "group writable", content: good, mode: 0o620, wantErr: true, want: "mode 0620"},
		{name: "empty", content: "\n", mode: 0o600, wantErr: true, want: "token: empty; make one with: head -c 32 /dev/urandom"},
		{name: "short", content: "short-token", mode: 0o600, wantErr: true, want: "11 bytes, shorter than the minimum 16"},
		{name: "too big", content: strings.Repeat("x", MaxTokenLen+1), mode: 0o600, wantErr: true, want: "above the 4096-byte limit"},
		{name: "directory", dir: true, wantErr: true, want: "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if tc.dir {
				if err := os.Mkdir(p, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			tok, err := LoadToken(p)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("LoadToken: error %v, want one saying %q", err, tc.want)
				}
				if !strings.Contains(err.Error(), p) && tc.name != "directory" {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(tok) != tc.want {
				t.Errorf("token %q, want %q", tok, tc.want)
			}
		})
	}
	if _, err := LoadToken(filepath.Join(dir, "missing")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: error %v, want not-exist", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// The proofs are bound to their role and to the transcript: no MAC stands in
// for another, and a different nonce gives a different proof.
func TestProofsDiffer(t *testing.T) {
	tok := []byte("0123456789abcdef0123")
	tr := []byte("hello+challenge")
	c, a, k := controllerProof(tok, tr), agentProof(tok, tr), sessionKey(tok, tr)
	if string(c) == string(a) || string(a) == string(k) || string(c) == string(k) {
		t.Error("controller proof, agent proof and session key must differ")
	}
	if string(controllerProof(tok, []byte("hello+challengf"))) == string(c) {
		t.Error("proof does not depend on the transcript")
	}
	if string(controllerProof([]byte("0123456789abcdef0124"), tr)) == string(c) {
		t.Error("proof does not depend on the token")
	}
	if len(c) != wire.MACLen {
		t.Errorf("proof is %d bytes, want %d", len(c), wire.MACLen)
	}
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(2, 10*time.Second, func() time.Time { return now })
	a := netip.MustParseAddr("198.18.0.1")
	b := netip.MustParseAddr("198.18.0.2")
	type step struct {
		advance time.Duration
		fail    netip.Addr // take a token from this address first
		ask     netip.Addr
		ok      bool
		retry   time.Duration
		log     bool
	}
	steps := []step{
		{ask: a, ok: true},
		{fail: a, ask: a, ok: true}, // 1 token left
		{fail: a, ask: a, ok: false, retry: 10 * time.Second, log: true}, // empty: refused, first refusal logged
		{ask: a, ok: false, retry: 10 * time.Second},                     // not logged again within a minute
		{ask: b, ok: true}, // other sources unaffected
		{advance: 5 * time.Second, ask: a, ok: false, retry: 5 * time.Second},
		{advance: 5 * time.Second, ask: a, ok: true}, // one token back
		{fail: a, ask: a, ok: false, retry: 10 * time.Second},
		{advance: time.Minute, ask: a, ok: true}, // refilled to the burst
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.fail.IsValid() {
			l.fail(s.fail)
		}
		ok, retry, logIt, _ := l.allow(s.ask)
		if d := cmp.Diff([]any{s.ok, s.retry, s.log}, []any{ok, retry, logIt}); d != "" {
			t.Errorf("step %d (ask %v): (ok, retry, log) (-want +got):\n%s", i, s.ask, d)
		}
	}
}

// IPv6 sources share a bucket per /64; IPv4-mapped addresses are IPv4.
func TestLimitKey(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"v4", "198.18.0.9", "198.18.0.9"},
		{"v4-mapped", "::ffff:198.18.0.9", "198.18.0.9"},
		{"v6 /64", "2001:2::1234:5678", "2001:2::"},
		{"v6 other /64", "2001:2:0:1::1", "2001:2:0:1::"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := limitKey(netip.MustParseAddr(tc.in)); got.String() != tc.want {
				t.Errorf("limitKey(%s) = %v, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestLimiterBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(1, time.Hour, func() time.Time { return now })
	for i := range 3 * maxBuckets {
		l.fail(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}))
	}
	if n := len(l.m); n > maxBuckets {
		t.Errorf("limiter holds %d buckets, want at most %d", n, maxBuckets)
	}
}
