// Package agenttest has a fake agent.Traffic for tests of the agent, its
// client and the controllers built on them: it sends and receives nothing on
// the network, but runs a real sender goroutine paced by the clock, so tests
// can measure when the agent stops it, and it fails the test if the agent
// ever asks it to send anywhere but the controller's address.
package agenttest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
)

// Traffic is a fake agent.Traffic. Receivers report the frames the Spec
// plans (rate × duration, or the burst) as received, and any the controller
// says it sent beyond that as lost, with a fixed latency; senders count
// frames at the Spec's rate until the trial ends, their context is
// cancelled or Stop is called.
type Traffic struct {
	tb testing.TB
	// allowed is the only destination address permitted.
	allowed netip.Addr

	// LatencyNs is the one-way latency receivers report; zero means 1 ms.
	LatencyNs int64
	// ReceiveErr and SendErr, when set, make StartReceive and StartSend
	// fail.
	ReceiveErr, SendErr error
	// SendLimit, when set, is the tester-limit verdict every sender
	// returns (its reason and transient flag).
	SendLimit *agent.SendResult

	mu      sync.Mutex
	dests   []netip.AddrPort
	senders []*Sender
	started chan *Sender
	recvs   int
}

var _ agent.Traffic = (*Traffic)(nil)

// New returns a fake whose agent may send only to allowed (the controller's
// address as the agent sees it, e.g. 127.0.0.1): any other destination is a
// test failure through tb.
func New(tb testing.TB, allowed netip.Addr) *Traffic {
	return &Traffic{tb: tb, allowed: allowed, started: make(chan *Sender, 16)}
}

func (f *Traffic) checkDest(what string, t agent.Trial, dst netip.AddrPort) {
	f.mu.Lock()
	f.dests = append(f.dests, dst)
	f.mu.Unlock()
	if dst.Addr() != f.allowed || dst != t.Peer || dst.Port() < agent.MinControllerPort {
		f.tb.Errorf("agent asked %s to send to %v; only the controller %v (trial peer %v, port >= %d) is allowed",
			what, dst, f.allowed, t.Peer, agent.MinControllerPort)
	}
}

// Dests returns every destination the agent asked the fake to send or
// reflect to.
func (f *Traffic) Dests() []netip.AddrPort {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]netip.AddrPort(nil), f.dests...)
}

// Started delivers each sender as it starts.
func (f *Traffic) Started() <-chan *Sender { return f.started }

// Receivers counts StartReceive calls.
func (f *Traffic) Receivers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recvs
}

// StartReceive implements agent.Traffic.
func (f *Traffic) StartReceive(ctx context.Context, t agent.Trial, reflectTo netip.AddrPort) (agent.Receiver, error) {
	if reflectTo.IsValid() {
		f.checkDest("the receiver to reflect", t, reflectTo)
	}
	if f.ReceiveErr != nil {
		return nil, f.ReceiveErr
	}
	f.mu.Lock()
	f.recvs++
	f.mu.Unlock()
	port := t.Listen.Port()
	if port == 0 {
		port = 40000
	}
	return &receiver{f: f, t: t, port: port, reflect: reflectTo.IsValid()}, nil
}

type receiver struct {
	f       *Traffic
	t       agent.Trial
	port    uint16
	reflect bool
	stopped bool
}

func (r *receiver) Port() uint16 { return r.port }

func (r *receiver) Stop(sent map[uint16]uint64) (agent.RecvResult, error) {
	if r.stopped {
		return agent.RecvResult{}, errors.New("agenttest: receiver stopped twice")
	}
	r.stopped = true
	lat := r.f.LatencyNs
	if lat == 0 {
		lat = 1e6
	}
	var res agent.RecvResult
	n := uint64(r.t.Spec.RateFPS * r.t.Spec.Duration.Seconds())
	if r.t.Spec.BurstFrames > 0 {
		n = uint64(r.t.Spec.BurstFrames)
	}
	for _, s := range r.t.Streams(trials.AtoB) {
		sr := trials.StreamResult{ID: s.ID, Direction: s.Direction, Received: n, TaggedLatencyNs: -1, LastLossNs: -1}
		if c, ok := sent[s.ID]; ok {
			// The fake path loses what was sent beyond the planned count.
			sr.Received = min(n, c)
			sr.Lost = c - sr.Received
			if sr.Lost > 0 {
				sr.LastLossNs = int64(r.t.Spec.Duration)
			}
		}
		if r.t.Latency == agent.LatencyOneWay {
			sr.Latency = trials.LatencySummary{Count: n, MinNs: lat, MeanNs: float64(lat), MaxNs: lat, P50Ns: lat, P90Ns: lat, P99Ns: lat, P999Ns: lat}
		}
		res.Streams = append(res.Streams, sr)
		if r.reflect {
			res.Reflected += min(n, uint64(r.t.ReflectFPS*r.t.Spec.Duration.Seconds()))
		}
	}
	res.Paths = trials.Paths{Transport: "fake", RX: "fake", Timestamps: "fake"}
	return res, nil
}

// StartSend implements agent.Traffic.
func (f *Traffic) StartSend(ctx context.Context, t agent.Trial, dst netip.AddrPort) (agent.Sender, error) {
	f.checkDest("the sender", t, dst)
	if f.SendErr != nil {
		return nil, f.SendErr
	}
	if !t.Deadline.After(time.Now()) {
		f.tb.Errorf("agent started a sender with a deadline %v in the past", t.Deadline)
	}
	s := &Sender{t: t, stop: make(chan struct{}), done: make(chan struct{}), start: time.Now(), limit: f.SendLimit}
	go s.run(ctx)
	f.mu.Lock()
	f.senders = append(f.senders, s)
	f.mu.Unlock()
	select {
	case f.started <- s:
	default:
	}
	return s, nil
}

// Sender is a fake sender: a goroutine that counts frames at the Spec's
// rate (each stream) every millisecond until stopped.
type Sender struct {
	t        agent.Trial
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	start    time.Time
	limit    *agent.SendResult
	// set by run before done is closed
	sent      uint64
	stoppedAt time.Time
	why       string
}

func (s *Sender) run(ctx context.Context) {
	defer close(s.done)
	rate := s.t.Spec.RateFPS
	planned := uint64(rate * s.t.Spec.Duration.Seconds())
	if s.t.Spec.BurstFrames > 0 {
		planned = uint64(s.t.Spec.BurstFrames)
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.stoppedAt, s.why = time.Now(), "context: "+context.Cause(ctx).Error()
			return
		case <-s.stop:
			s.stoppedAt, s.why = time.Now(), "Stop"
			return
		case now := <-tick.C:
			if !now.Before(s.t.Deadline) {
				s.stoppedAt, s.why = now, "deadline"
				return
			}
			s.sent = min(planned, uint64(now.Sub(s.start).Seconds()*rate))
			if s.sent >= planned {
				s.stoppedAt, s.why = now, "done"
				return
			}
		}
	}
}

// Done is closed when the sender has stopped sending.
func (s *Sender) Done() <-chan struct{} { return s.done }

// StoppedAt is when the sender stopped and why ("Stop", "context: …",
// "deadline", "done"); valid after Done.
func (s *Sender) StoppedAt() (time.Time, string) {
	<-s.done
	return s.stoppedAt, s.why
}

// Stop implements agent.Sender.
func (s *Sender) Stop() (agent.SendResult, error) {
	s.stopOnce.Do(func() { close(s.stop) })
	select {
	case <-s.done:
	case <-time.After(100 * time.Millisecond):
		return agent.SendResult{}, fmt.Errorf("agenttest: sender did not stop within 100 ms")
	}
	var res agent.SendResult
	secs := s.stoppedAt.Sub(s.start).Seconds()
	for _, st := range s.t.Streams(trials.BtoA) {
		r := trials.StreamResult{ID: st.ID, Direction: st.Direction, IntendedFPS: s.t.Spec.RateFPS, Sent: s.sent,
			TxSeconds: secs, TaggedLatencyNs: -1, LastLossNs: -1}
		if secs > 0 {
			r.OfferedFPS = float64(s.sent) / secs
		}
		res.Streams = append(res.Streams, r)
	}
	res.Paths = trials.Paths{Transport: "fake", TX: "fake"}
	if s.limit != nil {
		res.TesterLimitReason, res.TesterLimitTransient = s.limit.TesterLimitReason, s.limit.TesterLimitTransient
	}
	return res, nil
}
