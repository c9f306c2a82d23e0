// Package wire is the control protocol between an rfc2544 controller and its
// agent (PROTOCOL.md in package agent): the message types, their strict
// decoding and bounds, and the header. Package agent frames, authenticates
// and serves these messages; most programs need only package agent.
package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rfc2544/rfc2544/framing"

	"github.com/rfc2544/rfc2544/trials"
)

// Version is the control protocol version this package speaks. A peer that
// sends another version gets an Error message naming both versions and the
// connection is closed; see PROTOCOL.md.
const Version uint16 = 1

// Magic starts every message: the ASCII bytes "2544".
const Magic uint32 = 0x32353434

// Sizes, in bytes.
const (
	// HeaderLen is the fixed header: magic (4), version (2), type (2),
	// payload length (4), all big-endian.
	HeaderLen = 12
	// MaxBody is the largest JSON body accepted: 1 MiB. A Results message
	// with a latency histogram of a few thousand buckets per stream is
	// well under it (TestMaxResultsFit).
	MaxBody = 1 << 20
	// MaxHandshakeBody is the largest body accepted before the session is
	// authenticated: 16 KiB, so an unauthenticated peer cannot make either
	// side buffer a megabyte.
	MaxHandshakeBody = 16 << 10
	// MaxSoftware is the longest Software name accepted, in bytes.
	MaxSoftware = 256
	// MACLen is the session MAC that follows the body of every message
	// after the handshake (HMAC-SHA256).
	MACLen = 32
	// NonceLen is the length of each side's handshake nonce.
	NonceLen = 32
)

// Bounds of a TrialSetup, checked when it is decoded, before the agent
// allocates or opens anything for it. They are protocol limits, above
// anything a real trial needs; the agent's policy (--max-rate,
// --max-duration) is checked after them.
const (
	// MaxStreams is the most streams one trial may have.
	MaxStreams = 8
	// MaxFlows is the most flows (UDP port pairs) one trial may use,
	// summed over its streams (a stream with flows 0 or 1 counts one).
	// Each flow of a B->A stream is one socket of the agent's, so this
	// also bounds the agent's file descriptors and send buffers per trial.
	MaxFlows = 64
	// MaxSpan bounds every duration of a TrialSetup (duration, learning,
	// settle, tag_after, rate_change.at): 24 hours.
	MaxSpan = 24 * time.Hour
	// MaxRateFPS bounds every rate of a TrialSetup, in frames per second:
	// 1e9, above any Ethernet link's frame rate.
	MaxRateFPS = 1e9
	// MaxBurstFrames bounds burst_frames.
	MaxBurstFrames = 1 << 40
)

// Type is a message type, the header's third field.
type Type uint16

// Message types. Their numbers are part of the protocol: never renumber.
const (
	TypeHello Type = iota + 1
	TypeChallenge
	TypeAuth
	TypeAuthOK
	TypeTrialSetup
	TypeReady
	TypeStart
	TypeStarted
	TypeStop
	TypeResults
	TypeKeepalive
	TypeError
	TypeTCPSetup   // tcp.go
	TypeTCPResults // tcp.go
	typeEnd        // one past the last type
)

var typeNames = [...]string{
	TypeHello: "Hello", TypeChallenge: "Challenge", TypeAuth: "Auth", TypeAuthOK: "AuthOK",
	TypeTrialSetup: "TrialSetup", TypeReady: "Ready", TypeStart: "Start", TypeStarted: "Started",
	TypeStop: "Stop", TypeResults: "Results", TypeKeepalive: "Keepalive", TypeError: "Error",
	TypeTCPSetup: "TCPSetup", TypeTCPResults: "TCPResults",
}

func (t Type) String() string {
	if t > 0 && t < typeEnd {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint16(t))
}

// Message is the body of one control message. Each message type is a
// pointer to one of the structs below.
type Message interface {
	// Type is the message's header type.
	Type() Type
	// Validate checks the decoded fields; the error names the field.
	Validate() error
}

// Hello opens a session, from the controller.
type Hello struct {
	// Software names the controller, e.g. "rfc2544 v0.3.0", for the logs.
	Software string `json:"software"`
	// Nonce is the controller's random handshake nonce, NonceLen bytes.
	Nonce []byte `json:"nonce"`
}

// Challenge answers Hello, from the agent.
type Challenge struct {
	// Nonce is the agent's random handshake nonce, NonceLen bytes.
	Nonce []byte `json:"nonce"`
}

// Auth proves the controller holds the token, from the controller.
type Auth struct {
	// MAC is HMAC-SHA256(token, "rfc2544-agent controller" ‖ transcript),
	// the transcript being the Hello and Challenge messages as sent.
	MAC []byte `json:"mac"`
}

// AuthOK proves the agent holds the token too, and states its limits.
type AuthOK struct {
	// MAC is HMAC-SHA256(token, "rfc2544-agent agent" ‖ transcript ‖ Auth).
	MAC []byte `json:"mac"`
	// Agent describes the agent and its policy.
	Agent AgentInfo `json:"agent"`
}

// AgentInfo is what an agent tells its controller about itself.
type AgentInfo struct {
	// Software names the agent, e.g. "rfc2544 v0.3.0".
	Software string `json:"software"`
	// PeerAddr is the controller's address as the agent sees it: the only
	// destination the agent will send test traffic to.
	PeerAddr string `json:"peer_addr"`
	// MaxRateBps is the agent's cap on what it sends, in L1 bits per second
	// summed over every stream it sends (--max-rate).
	MaxRateBps float64 `json:"max_rate_bps"`
	// MaxDuration is the longest trial the agent accepts (--max-duration),
	// learning, traffic and settle wait included.
	MaxDuration Duration `json:"max_duration_ns"`
	// ClockSync is the agent's declared clock synchronization; one-way
	// latency needs ClockPTP.
	ClockSync ClockSync `json:"clock_sync"`
	// KeepaliveInterval and PeerTimeout are the agent's liveness settings.
	KeepaliveInterval Duration `json:"keepalive_interval_ns"`
	PeerTimeout       Duration `json:"peer_timeout_ns"`
	// IdleTimeout ends a session without a trial for this long; zero means
	// none.
	IdleTimeout Duration `json:"idle_timeout_ns"`
	// SessionTimeout ends any session this long after it started.
	SessionTimeout Duration `json:"session_timeout_ns"`
}

// TrialSetup tells the agent what port B receives and sends in one trial,
// from the controller. It names no address: the agent sends only to the
// controller's own address.
type TrialSetup struct {
	// TrialID identifies the trial within the session; the controller
	// picks it, and every later message of the trial repeats it.
	TrialID uint64 `json:"trial_id"`
	// Spec is the trial. Streams A->B are sent by the controller and
	// received by the agent; streams B->A are sent by the agent.
	Spec trials.Spec `json:"spec"`
	// AgentPort is the UDP port the agent receives on; zero lets the agent
	// pick one (Ready says which).
	AgentPort uint16 `json:"agent_port"`
	// ControllerPort is the controller's UDP port that the agent's B->A
	// streams and reflected frames go to. 1024 or above.
	ControllerPort uint16 `json:"controller_port"`
	// Latency is how latency is measured: LatencyRoundTrip (the agent
	// reflects latency-tagged frames back to the controller) or
	// LatencyOneWay (the agent timestamps with its own clock; only with
	// an agent started with --clock-sync ptp).
	Latency LatencyMode `json:"latency"`
	// ReflectFPS caps the rate at which the agent reflects frames in
	// round-trip mode, in frames per second; it counts against the
	// agent's --max-rate. Zero reflects nothing.
	ReflectFPS float64 `json:"reflect_fps"`
}

// Ready answers TrialSetup: the agent is receiving.
type Ready struct {
	TrialID uint64 `json:"trial_id"`
	// AgentPort is the UDP port the agent receives on.
	AgentPort uint16 `json:"agent_port"`
}

// Start starts the agent's senders, from the controller.
type Start struct {
	TrialID uint64 `json:"trial_id"`
}

// Started answers Start: the agent's senders (if any) are running.
type Started struct {
	TrialID uint64 `json:"trial_id"`
}

// Stop ends the trial, from the controller, after its own traffic and the
// settle wait: the agent stops sending and receiving and answers Results.
type Stop struct {
	TrialID uint64 `json:"trial_id"`
	// Sent is what the controller sent on each A->B stream, so the agent's
	// receiver can count Lost and LastLossNs.
	Sent []StreamSent `json:"sent"`
}

// StreamSent is the number of frames one stream sent.
type StreamSent struct {
	ID   uint16 `json:"id"`
	Sent uint64 `json:"sent"`
}

// Results is the agent's side of a trial.
type Results struct {
	TrialID uint64 `json:"trial_id"`
	// Streams holds one result per Spec stream, in Spec order: for A->B
	// streams the receive counters (Received, Reordered, Duplicate, Late,
	// KernelDrops, Latency: one-way only, else empty), for B->A streams
	// the send counters (Sent, OfferedFPS, TxSeconds). The controller
	// merges them with its own.
	Streams []trials.StreamResult `json:"streams"`
	// Reflected counts frames the agent reflected (round-trip latency).
	Reflected uint64 `json:"reflected"`
	// TesterLimited and TesterLimitReason are set when the agent's side
	// could not run the trial faithfully (its generator fell behind, its
	// socket dropped frames).
	TesterLimited     bool   `json:"tester_limited"`
	TesterLimitReason string `json:"tester_limit_reason"`
	// TesterLimitTransient says every reason is a stall of the agent's
	// host (its generator caught up), not a ceiling: the controller may
	// run the trial again. Absent (false) from agents before it.
	TesterLimitTransient bool `json:"tester_limit_transient,omitempty"`
	// Paths are the agent's kernel paths.
	Paths trials.Paths `json:"paths"`
}

// Keepalive says the sender is alive; either side sends it every keepalive
// interval.
type Keepalive struct{}

// Error reports a failure to the peer. Its layout is frozen across protocol
// versions, so a peer of any version can read why it was refused.
type Error struct {
	// Code classifies the error; see the Code constants.
	Code Code `json:"code"`
	// Message is for people: what went wrong and how to fix it.
	Message string `json:"message"`
	// TrialID is the trial the error is about, or zero.
	TrialID uint64 `json:"trial_id"`
	// Fatal is set when the sender closes the session after this message.
	Fatal bool `json:"fatal"`
}

// Code classifies an Error message.
type Code string

// Error codes.
const (
	CodeVersion     Code = "version"      // unsupported protocol version
	CodeAuth        Code = "auth"         // authentication failed
	CodeRateLimited Code = "rate-limited" // too many failed attempts from this address
	CodeBusy        Code = "busy"         // another controller has the agent
	CodeProtocol    Code = "protocol"     // malformed, oversized or unexpected message
	CodePolicy      Code = "policy"       // the trial breaks the agent's policy
	CodeTimeout     Code = "timeout"      // a deadline passed
	CodeTraffic     Code = "traffic"      // the agent's traffic engine failed
	CodeShutdown    Code = "shutdown"     // the agent is stopping
)

// Duration is a time.Duration carried as integer nanoseconds.
type Duration = int64

// ClockSync is an agent's declared clock synchronization.
type ClockSync string

// Clock synchronizations.
const (
	// ClockNone: the hosts' clocks are not synchronized; latency is
	// measured round trip.
	ClockNone ClockSync = "none"
	// ClockPTP: the user declares the clocks synchronized by PTP; one-way
	// latency may be measured.
	ClockPTP ClockSync = "ptp"
)

// LatencyMode is how a trial measures latency across hosts.
type LatencyMode string

// Latency modes.
const (
	// LatencyRoundTrip: the agent reflects frames; the controller times
	// their round trip. Reports say "round trip".
	LatencyRoundTrip LatencyMode = "round-trip"
	// LatencyOneWay: each receiver timestamps with its own clock; only
	// when both clocks are synchronized (--clock-sync ptp).
	LatencyOneWay LatencyMode = "one-way"
)

// Type implementations.
func (*Hello) Type() Type      { return TypeHello }
func (*Challenge) Type() Type  { return TypeChallenge }
func (*Auth) Type() Type       { return TypeAuth }
func (*AuthOK) Type() Type     { return TypeAuthOK }
func (*TrialSetup) Type() Type { return TypeTrialSetup }
func (*Ready) Type() Type      { return TypeReady }
func (*Start) Type() Type      { return TypeStart }
func (*Started) Type() Type    { return TypeStarted }
func (*Stop) Type() Type       { return TypeStop }
func (*Results) Type() Type    { return TypeResults }
func (*Keepalive) Type() Type  { return TypeKeepalive }
func (*Error) Type() Type      { return TypeError }

func newMessage(t Type) Message {
	switch t {
	case TypeHello:
		return new(Hello)
	case TypeChallenge:
		return new(Challenge)
	case TypeAuth:
		return new(Auth)
	case TypeAuthOK:
		return new(AuthOK)
	case TypeTrialSetup:
		return new(TrialSetup)
	case TypeReady:
		return new(Ready)
	case TypeStart:
		return new(Start)
	case TypeStarted:
		return new(Started)
	case TypeStop:
		return new(Stop)
	case TypeResults:
		return new(Results)
	case TypeKeepalive:
		return new(Keepalive)
	case TypeError:
		return new(Error)
	case TypeTCPSetup:
		return new(TCPSetup)
	case TypeTCPResults:
		return new(TCPResults)
	}
	return nil
}

func checkLen(field string, b []byte, n int) error {
	if len(b) != n {
		return fmt.Errorf("%s: %d bytes, want %d", field, len(b), n)
	}
	return nil
}

func (m *Hello) Validate() error {
	if len(m.Software) > MaxSoftware {
		return fmt.Errorf("hello software: %d bytes, above the %d-byte limit", len(m.Software), MaxSoftware)
	}
	return checkLen("hello nonce", m.Nonce, NonceLen)
}
func (m *Challenge) Validate() error { return checkLen("challenge nonce", m.Nonce, NonceLen) }
func (m *Auth) Validate() error      { return checkLen("auth mac", m.MAC, MACLen) }

func (m *AuthOK) Validate() error {
	if err := checkLen("auth_ok mac", m.MAC, MACLen); err != nil {
		return err
	}
	a := m.Agent
	if len(a.Software) > MaxSoftware {
		return fmt.Errorf("auth_ok agent software: %d bytes, above the %d-byte limit", len(a.Software), MaxSoftware)
	}
	if !Finite(a.MaxRateBps) || a.MaxRateBps <= 0 {
		return fmt.Errorf("auth_ok agent max_rate_bps %g: must be positive", a.MaxRateBps)
	}
	if a.ClockSync != ClockNone && a.ClockSync != ClockPTP {
		return fmt.Errorf("auth_ok agent clock_sync %q: want %q or %q", a.ClockSync, ClockNone, ClockPTP)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"max_duration_ns", a.MaxDuration}, {"keepalive_interval_ns", a.KeepaliveInterval}, {"peer_timeout_ns", a.PeerTimeout},
		{"idle_timeout_ns", a.IdleTimeout}, {"session_timeout_ns", a.SessionTimeout}} {
		if d.v < 0 {
			return fmt.Errorf("auth_ok agent %s %d: must not be negative", d.name, d.v)
		}
	}
	return nil
}

func (m *TrialSetup) Validate() error {
	if m.TrialID == 0 {
		return errors.New("trial_setup trial_id: must not be zero")
	}
	if err := m.Spec.Validate(); err != nil {
		return fmt.Errorf("trial_setup spec: %w", err)
	}
	if err := checkSpecBounds(m.Spec); err != nil {
		return fmt.Errorf("trial_setup spec %w", err)
	}
	if m.Latency != LatencyRoundTrip && m.Latency != LatencyOneWay {
		return fmt.Errorf("trial_setup latency %q: want %q or %q", m.Latency, LatencyRoundTrip, LatencyOneWay)
	}
	if !Finite(m.ReflectFPS) || m.ReflectFPS < 0 {
		return fmt.Errorf("trial_setup reflect_fps %g: must be 0 or positive", m.ReflectFPS)
	}
	if m.ReflectFPS > 0 && m.Latency != LatencyRoundTrip {
		return fmt.Errorf("trial_setup reflect_fps %g: only round-trip latency reflects frames", m.ReflectFPS)
	}
	return nil
}

// checkSpecBounds checks a trial's fields against the protocol's bounds
// (MaxStreams, MaxFlows, MaxSpan, MaxRateFPS, MaxBurstFrames) and the frame
// size against the IP version's smallest and largest test frame. The path
// MTU is the traffic engine's to check, at its port.
func checkSpecBounds(sp trials.Spec) error {
	proto := framing.IPv4UDP
	if sp.IPv6 {
		proto = framing.IPv6UDP
	}
	if err := framing.ValidateFrameSize(sp.FrameSize, proto, false, 0); err != nil {
		return fmt.Errorf("frame_size: %w", err)
	}
	if len(sp.Streams) > MaxStreams {
		return fmt.Errorf("streams: %d, above the limit of %d per trial", len(sp.Streams), MaxStreams)
	}
	flows := 0
	for _, st := range sp.Streams {
		if st.Flows < 0 || st.Flows > MaxFlows {
			return fmt.Errorf("stream %d flows %d: the agent takes 0 to %d flows per trial", st.ID, st.Flows, MaxFlows)
		}
		flows += max(st.Flows, 1)
	}
	if flows > MaxFlows {
		return fmt.Errorf("flows: %d summed over the streams, above the agent's limit of %d per trial; use fewer flows", flows, MaxFlows)
	}
	rates := []struct {
		name string
		v    float64
	}{{"rate_fps", sp.RateFPS}}
	spans := []struct {
		name string
		v    time.Duration
	}{{"duration_ns", sp.Duration}, {"learning_ns", sp.Learning}, {"settle_ns", sp.Settle}, {"tag_after_ns", sp.TagAfter}}
	if rc := sp.RateChange; rc != nil {
		rates = append(rates, struct {
			name string
			v    float64
		}{"rate_change rate_fps", rc.RateFPS})
		spans = append(spans, struct {
			name string
			v    time.Duration
		}{"rate_change at_ns", rc.At})
	}
	for _, r := range rates {
		if !Finite(r.v) || r.v < 0 || r.v > MaxRateFPS {
			return fmt.Errorf("%s %g: must be a finite number of frames per second from 0 to %g", r.name, r.v, float64(MaxRateFPS))
		}
	}
	for _, d := range spans {
		if d.v < 0 || d.v > MaxSpan {
			return fmt.Errorf("%s %d: must be from 0 to %v", d.name, int64(d.v), MaxSpan)
		}
	}
	if sp.BurstFrames < 0 || sp.BurstFrames > MaxBurstFrames {
		return fmt.Errorf("burst_frames %d: must be from 0 to %d", sp.BurstFrames, int64(MaxBurstFrames))
	}
	return nil
}

func nonZeroID(name string, id uint64) error {
	if id == 0 {
		return fmt.Errorf("%s trial_id: must not be zero", name)
	}
	return nil
}

func (m *Ready) Validate() error   { return nonZeroID("ready", m.TrialID) }
func (m *Start) Validate() error   { return nonZeroID("start", m.TrialID) }
func (m *Started) Validate() error { return nonZeroID("started", m.TrialID) }
func (m *Stop) Validate() error {
	seen := map[uint16]bool{}
	for _, c := range m.Sent {
		if seen[c.ID] {
			return fmt.Errorf("stop sent: stream %d twice", c.ID)
		}
		seen[c.ID] = true
	}
	return nonZeroID("stop", m.TrialID)
}

func (m *Results) Validate() error {
	if err := nonZeroID("results", m.TrialID); err != nil {
		return err
	}
	for i, s := range m.Streams {
		if !Finite(s.IntendedFPS) || !Finite(s.OfferedFPS) || !Finite(s.TxSeconds) || !Finite(s.Latency.MeanNs) ||
			!Finite(s.Latency.IPDVMeanAbsNs) || !Finite(s.Latency.JitterNs) {
			return fmt.Errorf("results stream %d: values must be finite", i)
		}
	}
	return nil
}

func (m *Keepalive) Validate() error { return nil }

func (m *Error) Validate() error {
	if m.Code == "" {
		return errors.New("error code: empty")
	}
	return nil
}

// Finite reports whether f is neither NaN nor infinite.
func Finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Header is a decoded message header.
type Header struct {
	Version uint16
	Type    Type
	// Length is the payload length in bytes: the JSON body, plus MACLen
	// once the session is keyed.
	Length uint32
}

func putHeader(b []byte, h Header) {
	binary.BigEndian.PutUint32(b[0:4], Magic)
	binary.BigEndian.PutUint16(b[4:6], h.Version)
	binary.BigEndian.PutUint16(b[6:8], uint16(h.Type))
	binary.BigEndian.PutUint32(b[8:12], h.Length)
}

// Decoding errors. Each is wrapped with the details.
var (
	// ErrMagic: the stream is not this protocol (e.g. a TLS client, an
	// HTTP request, a port scanner).
	ErrMagic = errors.New("not an rfc2544 agent control message")
	// ErrTooLong: a message longer than the limit.
	ErrTooLong = errors.New("message too long")
	// ErrMalformed: a message that does not decode strictly.
	ErrMalformed = errors.New("malformed message")
	// ErrVersion: the peers speak different protocol versions.
	ErrVersion = errors.New("protocol version mismatch")
)

// VersionError is returned for a message of another protocol version.
type VersionError struct {
	// Got is the peer's version; Want is Version.
	Got, Want uint16
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("unsupported control protocol version %d: this side speaks version %d; run the same rfc2544 release on the agent and the controller",
		e.Got, e.Want)
}

// Is makes errors.Is(err, ErrVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// ParseHeader checks the magic and the length limit (maxPayload bytes) of
// the HeaderLen bytes of b. The version is checked
// by the caller, which may still read an Error message of another version.
func ParseHeader(b []byte, maxPayload int) (Header, error) {
	if m := binary.BigEndian.Uint32(b[0:4]); m != Magic {
		return Header{}, fmt.Errorf("%w: magic %#08x, want %#08x (%q): is this port an rfc2544 agent?", ErrMagic, m, Magic, "2544")
	}
	h := Header{
		Version: binary.BigEndian.Uint16(b[4:6]),
		Type:    Type(binary.BigEndian.Uint16(b[6:8])),
		Length:  binary.BigEndian.Uint32(b[8:12]),
	}
	if int64(h.Length) > int64(maxPayload) {
		what := "limit"
		if maxPayload == MaxHandshakeBody {
			what = "handshake limit"
		}
		return h, fmt.Errorf("%w: %s of %d bytes, above the %s of %d bytes", ErrTooLong, h.Type, h.Length, what, maxPayload)
	}
	return h, nil
}

// Encode returns m as one unkeyed message of version Version: header and
// JSON body.
func Encode(m Message) ([]byte, error) { return EncodeVersion(Version, m, nil) }

// EncodeVersion returns m as one message of the given version, its payload
// the JSON body followed by tail (room for the session MAC).
func EncodeVersion(version uint16, m Message, tail []byte) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", m.Type(), err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("encode %s: %w: %d bytes, above the limit of %d bytes", m.Type(), ErrTooLong, len(body), MaxBody)
	}
	b := make([]byte, HeaderLen, HeaderLen+len(body)+len(tail))
	putHeader(b, Header{Version: version, Type: m.Type(), Length: uint32(len(body) + len(tail))})
	b = append(b, body...)
	return append(b, tail...), nil
}

// Decode decodes one complete unkeyed message (header and body) of version
// Version. It is strict: the magic, version, type and length must be right,
// the body must be one JSON object with no unknown fields and nothing after
// it, and the fields must be valid. An Error message of another version
// decodes (its layout is frozen) and comes back with a *VersionError.
func Decode(b []byte) (Message, error) {
	if len(b) < HeaderLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrMalformed, len(b), HeaderLen)
	}
	h, err := ParseHeader(b, MaxBody)
	if err != nil {
		return nil, err
	}
	if int(h.Length) != len(b)-HeaderLen {
		return nil, fmt.Errorf("%w: header says %d payload bytes, got %d", ErrMalformed, h.Length, len(b)-HeaderLen)
	}
	return DecodeBody(h, b[HeaderLen:])
}

// DecodeBody decodes, strictly (see Decode), the JSON body of a message
// with header h.
func DecodeBody(h Header, body []byte) (Message, error) {
	var verr error
	if h.Version != Version {
		verr = &VersionError{Got: h.Version, Want: Version}
		if h.Type != TypeError {
			return nil, verr
		}
	}
	m := newMessage(h.Type)
	if m == nil {
		return nil, fmt.Errorf("%w: unknown message type %d", ErrMalformed, uint16(h.Type))
	}
	if err := strictJSON(body, m); err != nil {
		if verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("%w: %s body: %w", ErrMalformed, h.Type, err)
	}
	if err := m.Validate(); err != nil {
		if verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return m, verr
}

// strictJSON decodes exactly one JSON object into v, refusing unknown fields
// and trailing data.
func strictJSON(b []byte, v any) error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return errors.New("want a JSON object")
	}
	if err := noDuplicateKeys(b); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// noDuplicateKeys refuses an object with the same key twice at any depth
// (encoding/json would silently keep the last), so no two decoders can
// read one message differently.
func noDuplicateKeys(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	type level struct {
		keys  map[string]bool
		inObj bool
		isKey bool // the next token in this object is a key
	}
	var stack []level
	for depth := 0; ; {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.inObj {
					top.isKey = true // this value ends the pair
				}
				stack = append(stack, level{keys: map[string]bool{}, inObj: tok == '{', isKey: true})
				depth++
			case '}', ']':
				stack = stack[:len(stack)-1]
				depth--
			}
			if depth == 0 {
				return nil // the caller refuses what follows
			}
		case string:
			if top != nil && top.inObj && top.isKey {
				if top.keys[tok] {
					return fmt.Errorf("key %q appears twice", tok)
				}
				top.keys[tok] = true
				top.isKey = false
				continue
			}
			if top != nil && top.inObj {
				top.isKey = true
			}
		default:
			if top != nil && top.inObj {
				top.isKey = true
			}
		}
	}
}
