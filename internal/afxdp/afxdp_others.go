//go:build !linux

package afxdp

import (
	"context"
	"runtime"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// errOS is what every call returns off Linux.
var errOS = notSupported("AF_XDP sockets exist only on Linux, not on %s", runtime.GOOS)

// Socket is an AF_XDP socket; off Linux it cannot be opened.
type Socket struct{}

// TxStream is one stream to send (see the Linux documentation).
type TxStream struct {
	ID        uint16
	Templates []*framing.Template
}

// GenResult is what Generate did.
type GenResult struct {
	Sent        uint64  `json:"sent"`
	Seconds     float64 `json:"seconds"`
	OfferedFPS  float64 `json:"offered_fps"`
	IntendedFPS float64 `json:"intended_fps"`
}

// Open returns an error wrapping ErrNotSupported.
func Open(cfg Config) (*Socket, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, errOS
}

// Features returns the zero Features.
func (s *Socket) Features() Features { return Features{} }

// PrepareTx returns an error wrapping ErrNotSupported.
func (s *Socket) PrepareTx([]TxStream) error { return errOS }

// Send returns an error wrapping ErrNotSupported.
func (s *Socket) Send(int, int, uint8, uint64, int64) (int, error) { return 0, errOS }

// SendStride returns an error wrapping ErrNotSupported.
func (s *Socket) SendStride(int, int, uint8, uint64, uint64, int64) (int, error) { return 0, errOS }

// OpenQueues returns an error wrapping ErrNotSupported.
func OpenQueues(cfg Config, n int) ([]*Socket, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return nil, errOS
}

// ProbeStamps returns an error wrapping ErrNotSupported.
func ProbeStamps() (map[Stamp]string, error) { return nil, errOS }

// CloseQueues does nothing.
func CloseQueues([]*Socket) error { return nil }

// CheckQueues returns an error wrapping ErrNotSupported.
func CheckQueues(string, int) error { return errOS }

// Flush returns an error wrapping ErrNotSupported.
func (s *Socket) Flush(time.Duration) (time.Time, error) { return time.Time{}, errOS }

// Receive returns an error wrapping ErrNotSupported.
func (s *Socket) Receive([]Frame, time.Duration) (int, error) { return 0, errOS }

// Generate returns an error wrapping ErrNotSupported.
func (s *Socket) Generate(context.Context, int, uint8, float64, time.Duration, int) (GenResult, error) {
	return GenResult{}, errOS
}

// Stats returns an error wrapping ErrNotSupported.
func (s *Socket) Stats() (Stats, error) { return Stats{}, errOS }

// Close does nothing.
func (s *Socket) Close() error { return nil }
