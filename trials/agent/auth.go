package agent

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Token limits, in bytes.
const (
	// MinTokenLen is the shortest token accepted: 16 bytes, e.g. the
	// output of `head -c 32 /dev/urandom | base64`.
	MinTokenLen = 16
	// MaxTokenLen is the longest token file accepted.
	MaxTokenLen = 4096
)

// LoadToken reads the shared secret from a token file, as both the agent
// and the controller do. Like ssh with a private key, it refuses a file
// that group or others may read or write, and a token shorter than
// MinTokenLen. Surrounding white space (a trailing newline) is not part of
// the token.
//
// Only a regular file is read (a named pipe, a device, a directory or a
// socket is refused with an error that says which), it is opened without
// blocking (a FIFO swapped in after the check cannot hang the caller), and
// at most MaxTokenLen+1 bytes are read.
func LoadToken(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	if err := regularFile(path, fi.Mode()); err != nil {
		return nil, err
	}
	f, err := openNoBlock(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	if err := regularFile(path, fi.Mode()); err != nil {
		return nil, err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("token file %s: mode %04o lets group or others access it; run chmod 600 %s", path, perm, path)
	}
	if fi.Size() > MaxTokenLen {
		return nil, fmt.Errorf("token file %s: %d bytes, above the %d-byte limit; a token is one line of random text", path, fi.Size(), MaxTokenLen)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTokenLen+1))
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(b) > MaxTokenLen {
		return nil, fmt.Errorf("token file %s: above the %d-byte limit; a token is one line of random text", path, MaxTokenLen)
	}
	tok := bytes.TrimSpace(b)
	if err := CheckToken(tok); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// regularFile refuses anything but a regular file, naming what it is.
func regularFile(path string, m os.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeDevice != 0 || m&os.ModeCharDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a directory"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Errorf("token file %s: %s, not a regular file; write the token to a file readable by its owner only (chmod 600) and name that file", path, what)
}

// CheckToken checks a token's length.
func CheckToken(tok []byte) error {
	if len(tok) == 0 {
		return fmt.Errorf("token: empty; make one with: head -c 32 /dev/urandom | base64 > agent.token && chmod 600 agent.token")
	}
	if len(tok) < MinTokenLen {
		return fmt.Errorf("token: %d bytes, shorter than the minimum %d; make one with: head -c 32 /dev/urandom | base64 > agent.token", len(tok), MinTokenLen)
	}
	if len(tok) > MaxTokenLen {
		return fmt.Errorf("token: %d bytes, above the %d-byte limit", len(tok), MaxTokenLen)
	}
	return nil
}

// Labels that separate the uses of the token, so one MAC can never stand in
// for another.
const (
	labelController = "rfc2544-agent v1 controller proof\x00"
	labelAgent      = "rfc2544-agent v1 agent proof\x00"
	labelSession    = "rfc2544-agent v1 session key\x00"
)

func mac(token []byte, label string, transcript []byte) []byte {
	h := hmac.New(sha256.New, token)
	h.Write([]byte(label))
	h.Write(transcript)
	return h.Sum(nil)
}

// controllerProof is the Auth MAC over Hello and Challenge as sent.
func controllerProof(token, transcript []byte) []byte { return mac(token, labelController, transcript) }

// agentProof is the AuthOK MAC over Hello, Challenge and Auth as sent.
func agentProof(token, transcript []byte) []byte { return mac(token, labelAgent, transcript) }

// sessionKey keys every message after AuthOK; transcript is Hello,
// Challenge and Auth as sent.
func sessionKey(token, transcript []byte) []byte { return mac(token, labelSession, transcript) }

// limiter rate-limits failed handshakes per source: a token bucket of burst
// failures refilled by one every refill. A source whose bucket is empty is
// refused before its handshake starts. IPv6 sources are grouped by /64,
// the smallest block one host usually holds.
type limiter struct {
	mu     sync.Mutex
	burst  float64
	refill time.Duration
	now    func() time.Time
	m      map[netip.Addr]*bucket
}

type bucket struct {
	tokens  float64
	last    time.Time
	lastLog time.Time
	quiet   int // refusals not logged since lastLog
}

// maxBuckets bounds the limiter's memory under a scan from many sources.
const maxBuckets = 4096

func newLimiter(burst int, refill time.Duration, now func() time.Time) *limiter {
	return &limiter{burst: float64(burst), refill: refill, now: now, m: map[netip.Addr]*bucket{}}
}

func limitKey(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

// get returns a's bucket refilled to now; l.mu held.
func (l *limiter) get(a netip.Addr) *bucket {
	now := l.now()
	b := l.m[a]
	if b == nil {
		if len(l.m) >= maxBuckets {
			l.prune(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.m[a] = b
		return b
	}
	if l.refill > 0 {
		b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.last))/float64(l.refill))
	}
	b.last = now
	return b
}

func (l *limiter) prune(now time.Time) {
	for a, b := range l.m {
		if l.refill > 0 && b.tokens+float64(now.Sub(b.last))/float64(l.refill) >= l.burst {
			delete(l.m, a)
		}
	}
	for a := range l.m { // still full of failing sources: forget some
		if len(l.m) < maxBuckets {
			break
		}
		delete(l.m, a)
	}
}

// allow reports whether a may attempt a handshake; when not, how long
// until it may, and whether this refusal should be logged (the first, then
// at most one a minute with the count of those not logged).
func (l *limiter) allow(a netip.Addr) (ok bool, retry time.Duration, log bool, quiet int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(limitKey(a))
	if b.tokens >= 1 {
		return true, 0, false, 0
	}
	retry = time.Duration((1 - b.tokens) * float64(l.refill))
	now := l.now()
	if now.Sub(b.lastLog) >= time.Minute {
		b.lastLog, quiet, b.quiet = now, b.quiet, 0
		return false, retry, true, quiet
	}
	b.quiet++
	return false, retry, false, 0
}

// fail takes one token from a's bucket.
func (l *limiter) fail(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(limitKey(a))
	b.tokens = max(0, b.tokens-1)
}

// refund gives back the token fail took from a's bucket (the handshake
// succeeded after all).
func (l *limiter) refund(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(limitKey(a))
	b.tokens = min(l.burst, b.tokens+1)
}

// logLimiter rate-limits log lines: a token bucket of burst lines refilled
// by one every refill. allow reports whether to log this line and how many
// were not logged since the last logged one.
type logLimiter struct {
	mu     sync.Mutex
	burst  float64
	refill time.Duration
	now    func() time.Time
	tokens float64
	last   time.Time
	quiet  int
}

func newLogLimiter(burst int, refill time.Duration, now func() time.Time) *logLimiter {
	return &logLimiter{burst: float64(burst), refill: refill, now: now, tokens: float64(burst), last: now()}
}

func (l *logLimiter) allow() (ok bool, quiet int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.tokens = min(l.burst, l.tokens+float64(now.Sub(l.last))/float64(l.refill))
	l.last = now
	if l.tokens < 1 {
		l.quiet++
		return false, 0
	}
	l.tokens--
	quiet, l.quiet = l.quiet, 0
	return true, quiet
}
