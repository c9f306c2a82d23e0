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
	"os"
	"sync"
	"sync/atomic"
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
	// outOfOrder counts the segments received out of order (readFull);
	// outOfOrder of this package, a fake in tests.
	outOfOrder func(net.Conn) (uint32, bool)
	// quiet is when (Unix ns) the peer may stop being silent: a trial
	// that overloads the path this connection crosses runs until then
	// (setQuiet). Zero: no such trial.
	quiet atomic.Int64
}

// setQuiet says the peer's messages may be held up until t (a trial whose
// load may fill the DUT's queue the control connection crosses runs until
// then): a keyed read waits till t + its timeout before the peer is lost.
// The zero Time ends it.
func (c *conn) setQuiet(t time.Time) {
	if t.IsZero() {
		c.quiet.Store(0)
		return
	}
	c.quiet.Store(t.UnixNano())
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), version: wire.Version, record: true, outOfOrder: outOfOrder}
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

// maxHeldBack bounds how many timeouts in a row a keyed read waits for a
// peer whose data is held back by a lost segment (readFull): TCP's
// retransmission timer doubles at each loss, and at 8 × the 1.5 s peer
// timeout it has had four tries behind a full DUT queue.
const maxHeldBack = 8

// read reads one message, waiting at most timeout (zero: the deadline
// already set on the connection, if any). A peer Error message comes back as
// a *RemoteError, also when it is of another protocol version.
func (c *conn) read(timeout time.Duration) (wire.Message, error) {
	if timeout > 0 {
		c.nc.SetReadDeadline(time.Now().Add(timeout))
	}
	var hb [wire.HeaderLen]byte
	if err := c.readFull(hb[:], timeout); err != nil {
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
	if err := c.readFull(buf[wire.HeaderLen:], timeout); err != nil {
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

// readFull fills b. In a keyed session (the peer authenticated) a timeout
// is not yet the peer's loss in two cases, both of a control connection
// that crosses the DUT while a trial overloads it (a 1000-frame tbf queue
// at 20 Mbit/s holds 0.6 s of 1518-byte frames, drops what does not fit,
// and TCP's retransmission timer grows with that RTT):
//   - until the quiet time (setQuiet) a trial that may fill the path runs:
//     the read waits till then plus one timeout;
//   - a segment the DUT dropped holds back every later one (keepalives
//     included) until TCP retransmits it: the read waits one timeout more
//     if segments arrived out of order meanwhile (TCP_INFO rcv_ooopack
//     grew: the peer sent them), at most maxHeldBack times.
//
// A silent peer (down, partitioned, hung) outside a quiet time sends
// nothing and is lost after one timeout, as before; so is every peer
// before it authenticates.
func (c *conn) readFull(b []byte, timeout time.Duration) error {
	var ooo uint32
	keyed := timeout > 0 && c.rmac != nil
	watch := keyed
	if watch {
		ooo, watch = c.outOfOrder(c.nc)
	}
	held := 0
	for n := 0; n < len(b); {
		m, err := c.br.Read(b[n:])
		n += m
		if err == nil {
			continue
		}
		if n == len(b) {
			return nil
		}
		if keyed && errors.Is(err, os.ErrDeadlineExceeded) {
			if q := c.quiet.Load(); q > time.Now().UnixNano() {
				c.nc.SetReadDeadline(time.Unix(0, q).Add(timeout))
				continue
			}
		}
		if watch && held < maxHeldBack && errors.Is(err, os.ErrDeadlineExceeded) {
			if now, ok := c.outOfOrder(c.nc); ok && now != ooo {
				ooo = now
				held++
				c.nc.SetReadDeadline(time.Now().Add(timeout))
				continue
			}
		}
		if err == io.EOF && n > 0 {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}
