package agent_test

import (
	"context"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// fuzzAgent is one agent per fuzzing process: the real Server with the
// real UDP traffic engine on loopback, capped at 1 Mbit/s and 2 s trials
// so the traffic it sends (to the fuzzing controller's own address only)
// stays light.
type fuzzAgent struct {
	addr string
	p    *agent.RawPeer
	nc   net.Conn
}

func startFuzzAgent(f *testing.F) *fuzzAgent {
	srv, err := agent.NewServer(agent.Config{
		Token:   token,
		Traffic: &agent.UDPTraffic{Config: trials.RemotePort{SocketBuffer: 256 << 10}},
		Policy:  agent.Policy{MaxRateBps: 1e6, MaxDuration: 2 * time.Second},
		// Keep whole fuzzing runs within the failed-handshake allowance.
		AuthBurst: 1 << 20,
		// The fuzzing controller sends no keepalives, and the fuzzing
		// engine pauses between inputs (minimizing, syncing the corpus)
		// for longer than the 1.5-s default: a session lost that way is
		// the harness's fault, not the agent's.
		PeerTimeout: time.Hour,
		// Likewise a fuzzing process at nice 19 on a loaded box can be
		// descheduled for longer than the 3-s pre-authentication deadline
		// in the middle of its own handshake.
		HandshakeTimeout: time.Minute,
	})
	if err != nil {
		f.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	a := &fuzzAgent{addr: ln.Addr().String()}
	f.Cleanup(func() {
		a.close()
		cancel()
		if err := <-done; err != nil {
			f.Error(err)
		}
	})
	return a
}

func (a *fuzzAgent) close() {
	if a.nc != nil {
		a.nc.Close()
	}
	a.nc, a.p = nil, nil
}

// session returns an authenticated session, dialling one if needed.
func (a *fuzzAgent) session(t *testing.T) *agent.RawPeer {
	if a.p != nil {
		return a.p
	}
	nc, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	p := agent.NewRawPeer(nc, wire.Version)
	if err := p.Write(&wire.Hello{Software: "fuzz", Nonce: newNonce()}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(5 * time.Second); err != nil {
		t.Fatalf("challenge: %v", err)
	}
	if err := p.Write(&wire.Auth{MAC: agent.ControllerProof(token, p.Transcript())}); err != nil {
		t.Fatal(err)
	}
	key := agent.SessionKey(token, p.Transcript())
	if m, err := p.Read(5 * time.Second); err != nil {
		t.Fatalf("auth ok: %v", err)
	} else if _, ok := m.(*wire.AuthOK); !ok {
		t.Fatalf("got %s, want AuthOK", m.Type())
	}
	p.SetKey(key, false)
	a.nc, a.p = nc, p
	return p
}

// call sends m and returns the agent's answer (keepalives skipped): a
// message, or the agent's Error. Any other failure fails the test: the
// agent must answer every message of an authenticated controller, if only
// with an Error, and never drop the connection without saying why.
func (a *fuzzAgent) call(t *testing.T, m wire.Message) (wire.Message, *agent.RemoteError) {
	t.Helper()
	p := a.session(t)
	if err := p.Write(m); err != nil {
		t.Fatalf("write %s: %v", m.Type(), err)
	}
	for {
		r, err := p.Read(10 * time.Second)
		var re *agent.RemoteError
		if errors.As(err, &re) {
			if re.Fatal {
				a.close()
			}
			return nil, re
		}
		if err != nil {
			t.Fatalf("%s: the agent failed without an Error: %v", m.Type(), err)
		}
		if _, ok := r.(*wire.Keepalive); !ok {
			return r, nil
		}
	}
}

// withinBounds reports whether s is a setup the agent may accept: the
// protocol's bounds and its 1 Mbit/s cap (checked independently of the
// agent's own code).
func withinBounds(s wire.TrialSetup) bool {
	sp := s.Spec
	minFrame := 64
	if sp.IPv6 {
		minFrame = 84
	}
	if sp.FrameSize < minFrame || sp.FrameSize > framing.MaxJumbo || len(sp.Streams) > wire.MaxStreams {
		return false
	}
	flows, ba := 0, 0
	for _, st := range sp.Streams {
		if st.Flows < 0 || st.Flows > wire.MaxFlows {
			return false
		}
		flows += max(st.Flows, 1)
		if st.Direction == trials.BtoA {
			ba += max(st.Flows, 1)
		}
	}
	if flows > wire.MaxFlows {
		return false
	}
	for _, d := range []time.Duration{sp.Duration, sp.Learning, sp.Settle, sp.TagAfter} {
		if d < 0 || d > wire.MaxSpan {
			return false
		}
	}
	rate := sp.RateFPS
	if rc := sp.RateChange; rc != nil {
		rate = max(rate, rc.RateFPS)
	}
	if rate < 0 || rate > wire.MaxRateFPS || s.ReflectFPS < 0 || s.ReflectFPS > 1e9 {
		return false
	}
	nBA := 0
	for _, st := range sp.Streams {
		if st.Direction == trials.BtoA {
			nBA++
		}
	}
	bits := float64((sp.FrameSize + 20) * 8)
	if (float64(nBA)*rate+s.ReflectFPS)*bits > 1e6*(1+1e-6) {
		return false
	}
	// Learning: one datagram per B->A flow, paced at the cap.
	if ba > 0 && float64(ba-1)*bits/1e6 >= max(sp.Learning, wire.MinLearning).Seconds() {
		return false
	}
	return true
}

// FuzzSession drives a real agent session on loopback through TrialSetup,
// Start and Stop with fuzzed trials: the agent must answer each message
// (Ready, Started, Results or an Error), never crash, and never accept a
// trial outside the protocol's bounds or its rate cap.
func FuzzSession(f *testing.F) {
	// frame, ipv6, streams (low 3 bits: count-1; bits 3..: directions),
	// flows, rate, rate change rate, rate change at, duration, learning,
	// settle, tag after, burst, reflect, controller port, agent port,
	// one-way.
	f.Add(512, false, uint16(0b10_001), 1, 100.0, 0.0, int64(0), int64(200e6), int64(0), int64(10e6), int64(0), int64(0), 10.0, uint16(40000), uint16(0), false)
	f.Add(20, false, uint16(0b1_000), 1, 10.0, 0.0, int64(0), int64(200e6), int64(0), int64(0), int64(0), int64(0), 0.0, uint16(40000), uint16(0), false)
	f.Add(65000, false, uint16(0b0_000), 1, 10.0, 0.0, int64(0), int64(200e6), int64(0), int64(0), int64(0), int64(0), 0.0, uint16(40000), uint16(0), false)
	f.Add(512, false, uint16(0b1_000), 1125899906842624, 10.0, 0.0, int64(0), int64(200e6), int64(0), int64(0), int64(0), int64(0), 0.0, uint16(40000), uint16(0), false)
	f.Add(1518, false, uint16(0b1_000), 1000, 10.0, 0.0, int64(0), int64(200e6), int64(0), int64(0), int64(0), int64(0), 0.0, uint16(40000), uint16(0), false)
	f.Add(1518, false, uint16(0b1_000), 8, 10.0, 0.0, int64(0), int64(100e6), int64(500e6), int64(0), int64(0), int64(0), 0.0, uint16(40000), uint16(0), false)
	f.Add(128, true, uint16(0b10_001), 2, 50.0, 80.0, int64(50e6), int64(100e6), int64(0), int64(0), int64(50e6), int64(0), 5.0, uint16(40000), uint16(0), false)
	f.Add(256, false, uint16(0b1_000), 0, 1e-300, 0.0, int64(0), int64(0), int64(0), int64(0), int64(0), int64(1<<40), 0.0, uint16(40000), uint16(0), false)
	f.Add(64, false, uint16(0b0_000), 3, 1000.0, 0.0, int64(0), int64(300e6), int64(0), int64(0), int64(0), int64(0), 0.0, uint16(80), uint16(1000), true)
	a := startFuzzAgent(f)
	var id uint64
	f.Fuzz(func(t *testing.T, frame int, ipv6 bool, streams uint16, flows int, rate, rcRate float64, rcAt, dur, learn, settle, tag, burst int64,
		reflect float64, ctrlPort, agentPort uint16, oneWay bool) {
		sp := trials.Spec{FrameSize: frame, IPv6: ipv6, RateFPS: rate, Duration: time.Duration(dur), Learning: time.Duration(learn),
			Settle: time.Duration(settle), TagAfter: time.Duration(tag), BurstFrames: burst}
		for i := range int(streams&7) + 1 {
			d := trials.AtoB
			if streams>>(3+i)&1 == 1 {
				d = trials.BtoA
			}
			sp.Streams = append(sp.Streams, trials.Stream{ID: uint16(i + 1), Direction: d, Flows: flows})
		}
		if rcAt != 0 || rcRate != 0 {
			sp.RateChange = &trials.RateChange{At: time.Duration(rcAt), RateFPS: rcRate}
		}
		for _, v := range []float64{rate, rcRate, reflect} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return // JSON cannot carry them: the decoder refuses them (FuzzDecode)
			}
		}
		id++
		lat := agent.LatencyRoundTrip
		if oneWay {
			lat = agent.LatencyOneWay
		}
		s := &wire.TrialSetup{TrialID: id, Spec: sp, AgentPort: agentPort, ControllerPort: ctrlPort, Latency: lat, ReflectFPS: reflect}
		m, re := a.call(t, s)
		if re != nil {
			return
		}
		if _, ok := m.(*wire.Ready); !ok {
			t.Fatalf("TrialSetup: got %s, want Ready or an Error", m.Type())
		}
		if !withinBounds(*s) {
			t.Fatalf("the agent accepted a trial outside its bounds or cap: %+v", *s)
		}
		if m, re = a.call(t, &wire.Start{TrialID: id}); re == nil {
			if _, ok := m.(*wire.Started); !ok {
				t.Fatalf("Start: got %s, want Started or an Error", m.Type())
			}
		} else if re.Fatal {
			return
		}
		if m, re = a.call(t, &wire.Stop{TrialID: id}); re == nil {
			if _, ok := m.(*wire.Results); !ok {
				t.Fatalf("Stop: got %s, want Results or an Error", m.Type())
			}
		}
	})
}
