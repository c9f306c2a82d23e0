package agent

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// Directions of a keyed session, bound into every message MAC so a message
// cannot be reflected back to its sender.
const (
	dirToAgent      byte = 1
	dirToController byte = 2
)

// ErrBadMAC is wrapped when a keyed message's MAC does not verify: the
// message was altered, replayed, reordered or injected.
var ErrBadMAC = errors.New("message authentication failed")

// conn frames messages on a TCP connection. Reads happen on one goroutine;
// writes are serialized by wmu. Until key is set messages are unkeyed
// (the handshake); after, every payload ends in a MAC over the direction,
// a per-direction sequence number, the header and the body.
type conn struct {
	nc      net.Conn
	br      *bufio.Reader
	version uint16 // version written in headers (tests change it)

	// transcript records the handshake messages as sent, for the MACs.
	transcript []byte
	record     bool

	rkey, wkey []byte // nil until keyed
	rdir, wdir byte
	rseq       uint64
	rmac       hash.Hash

	wmu  sync.Mutex
	wseq uint64
	wmac hash.Hash
	// writeTimeout bounds each write; zero means none.
	writeTimeout time.Duration
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), version: wire.Version, record: true}
}

// setKey keys the session: from now on every message carries a MAC.
func (c *conn) setKey(key []byte, isAgent bool) {
	c.record = false
	c.transcript = nil
	c.rdir, c.wdir = dirToController, dirToAgent
	if isAgent {
		c.rdir, c.wdir = dirToAgent, dirToController
	}
	c.rkey, c.wkey = key, key
	c.rmac = hmac.New(sha256.New, key)
	c.wmu.Lock()
	c.wmac = hmac.New(sha256.New, key)
	c.wmu.Unlock()
}

func sessionMAC(h hash.Hash, dir byte, seq uint64, msg []byte) []byte {
	h.Reset()
	var pre [9]byte
	pre[0] = dir
	binary.BigEndian.PutUint64(pre[1:], seq)
	h.Write(pre[:])
	h.Write(msg)
	return h.Sum(nil)
}

// write sends m.
func (c *conn) write(m wire.Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var tail []byte
	if c.wmac != nil {
		tail = make([]byte, wire.MACLen)
	}
	b, err := wire.EncodeVersion(c.version, m, tail)
	if err != nil {
		return err
	}
	if c.wmac != nil {
		n := len(b) - wire.MACLen
		copy(b[n:], sessionMAC(c.wmac, c.wdir, c.wseq, b[:n]))
		c.wseq++
	} else if c.record {
		c.transcript = append(c.transcript, b...)
	}
	if c.writeTimeout > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", m.Type(), err)
	}
	return nil
}

// read reads one message, waiting at most timeout (zero: the deadline
// already set on the connection, if any). A peer Error message comes back as
// a *RemoteError, also when it is of another protocol version.
func (c *conn) read(timeout time.Duration) (wire.Message, error) {
	if timeout > 0 {
		c.nc.SetReadDeadline(time.Now().Add(timeout))
	}
	var hb [wire.HeaderLen]byte
	if _, err := io.ReadFull(c.br, hb[:]); err != nil {
		return nil, err
	}
	limit := wire.MaxHandshakeBody
	if c.rmac != nil {
		limit = wire.MaxBody + wire.MACLen
	}
	h, err := wire.ParseHeader(hb[:], limit)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, wire.HeaderLen+int(h.Length))
	copy(buf, hb[:])
	if _, err := io.ReadFull(c.br, buf[wire.HeaderLen:]); err != nil {
		return nil, fmt.Errorf("read %s body: %w", h.Type, err)
	}
	body := buf[wire.HeaderLen:]
	if c.rmac != nil {
		if h.Version != wire.Version {
			return nil, &wire.VersionError{Got: h.Version, Want: wire.Version}
		}
		if len(body) < wire.MACLen {
			return nil, fmt.Errorf("%w: %s of %d bytes has no room for its MAC", wire.ErrMalformed, h.Type, len(body))
		}
		n := len(buf) - wire.MACLen
		if !hmac.Equal(buf[n:], sessionMAC(c.rmac, c.rdir, c.rseq, buf[:n])) {
			return nil, fmt.Errorf("%w: %s number %d", ErrBadMAC, h.Type, c.rseq)
		}
		c.rseq++
		body = body[:len(body)-wire.MACLen]
	}
	m, err := wire.DecodeBody(h, body)
	if e, ok := m.(*wire.Error); ok {
		re := &RemoteError{Code: e.Code, Message: e.Message, TrialID: e.TrialID, Fatal: e.Fatal}
		if err != nil {
			re.PeerVersion = h.Version
		}
		return nil, re
	}
	if err != nil {
		return nil, err
	}
	if c.record {
		c.transcript = append(c.transcript, buf...)
	}
	return m, nil
}

// RemoteError is an Error message the peer sent.
type RemoteError struct {
	Code    wire.Code
	Message string
	TrialID uint64
	// Fatal is set when the peer closed the session after it.
	Fatal bool
	// PeerVersion is the peer's protocol version when it differs from
	// Version, else zero.
	PeerVersion uint16
}

// Error is the peer's message; Code is for programs (errors.Is with the
// sentinels, or the field).
func (e *RemoteError) Error() string {
	s := e.Message
	if s == "" {
		s = "peer reported a " + string(e.Code) + " error"
	}
	if e.TrialID != 0 {
		s = fmt.Sprintf("trial %d: %s", e.TrialID, s)
	}
	if e.PeerVersion != 0 {
		s += fmt.Sprintf(" (peer speaks control protocol version %d, this side %d)", e.PeerVersion, wire.Version)
	}
	return s
}

// Is lets errors.Is match a RemoteError against the sentinels of its code.
func (e *RemoteError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.Code == wire.CodeAuth
	case ErrBusy:
		return e.Code == wire.CodeBusy
	case ErrPolicy:
		return e.Code == wire.CodePolicy
	case ErrVersion:
		return e.Code == wire.CodeVersion
	}
	return false
}

// Sentinel errors a caller can branch on with errors.Is.
var (
	// ErrAgentLost: the control connection to the agent dropped or went
	// silent. A trial that was running is invalid: report it as "trial
	// invalid (agent lost)", never as loss in the device under test.
	ErrAgentLost = errors.New("agent lost")
	// ErrAuth: authentication failed (either side).
	ErrAuth = errors.New("authentication failed")
	// ErrBusy: the agent is serving another controller.
	ErrBusy = errors.New("agent busy")
	// ErrPolicy: the agent refused a trial that breaks its policy.
	ErrPolicy = errors.New("refused by the agent's policy")
	// ErrVersion: the peers speak different protocol versions.
	ErrVersion = wire.ErrVersion
)

// errorFor maps a local read or handshake error to the Error message sent
// to the peer before closing.
func errorFor(err error) *wire.Error {
	var ve *wire.VersionError
	switch {
	case errors.As(err, &ve):
		return &wire.Error{Code: wire.CodeVersion, Message: ve.Error(), Fatal: true}
	case errors.Is(err, wire.ErrTooLong), errors.Is(err, wire.ErrMalformed), errors.Is(err, wire.ErrMagic), errors.Is(err, ErrBadMAC):
		return &wire.Error{Code: wire.CodeProtocol, Message: err.Error(), Fatal: true}
	}
	return nil
}
