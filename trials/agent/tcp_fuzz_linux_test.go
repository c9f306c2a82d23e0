//go:build linux

package agent_test

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// FuzzTCPSession drives a real agent session on loopback through
// TCPSetup, the trial's connections, Start and Stop with fuzzed TCP trials,
// and a second fuzzed trial set up beside the first (kind2 below 8; 8 and
// above: none): the agent must answer each message (Ready, Started,
// TCPResults or an Error), never crash, and never accept a trial outside
// the protocol's bounds or its policy, nor a second one but a transfer the
// other way within the session's window total (checked here independently
// of the agent's code).
func FuzzTCPSession(f *testing.F) {
	// kind, streams, window, duration, probes, sample every, agent port;
	// the second trial's kind and window (one stream, the same duration).
	f.Add(uint8(0), 1, 0, int64(0), 5, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(1), 2, 65536, int64(200e6), 0, int64(50e6), uint16(0), uint8(8), 0)
	f.Add(uint8(2), 3, 0, int64(300e6), 0, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(2), 65, 1<<30, int64(1<<62), 0, int64(1), uint16(22), uint8(8), 0)
	f.Add(uint8(1), 64, 16<<20, int64(1e9), 0, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(0), 1, 0, int64(0), 1<<40, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(2), 1, 0, int64(3e9), 0, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(7), 1, 0, int64(1e9), 0, int64(0), uint16(0), uint8(8), 0)
	f.Add(uint8(1), 1, 0, int64(2e9), 0, int64(10e6), uint16(40123), uint8(8), 0)
	f.Add(uint8(1), 2, 65536, int64(300e6), 0, int64(0), uint16(0), uint8(2), 65536)  // both ways at once
	f.Add(uint8(2), 1, 0, int64(300e6), 0, int64(0), uint16(0), uint8(2), 0)          // the same way twice
	f.Add(uint8(0), 1, 0, int64(0), 3, int64(0), uint16(0), uint8(2), 0)              // beside an rtt probe
	f.Add(uint8(1), 4, 16<<20, int64(300e6), 0, int64(0), uint16(0), uint8(2), 65536) // above 64 MiB of windows at once
	f.Add(uint8(2), 1, 0, int64(300e6), 0, int64(0), uint16(0), uint8(5), 0)          // an unknown second kind
	a := startFuzzAgent(f)
	var id uint64
	kinds := []wire.TCPKind{wire.TCPRTT, wire.TCPToAgent, wire.TCPFromAgent}
	kindOf := func(k uint8) wire.TCPKind {
		if int(k) < len(kinds) {
			return kinds[k]
		}
		return wire.TCPKind("kind-x")
	}
	f.Fuzz(func(t *testing.T, kind uint8, streams, window int, dur int64, probes int, every int64, port uint16, kind2 uint8, window2 int) {
		id++
		s := &wire.TCPSetup{TrialID: id, Kind: kindOf(kind), Streams: streams, WindowBytes: window, Duration: dur, Probes: probes, SampleEvery: every, AgentPort: port}
		m, re := a.call(t, s)
		if re != nil {
			return
		}
		ready, ok := m.(*wire.Ready)
		if !ok {
			t.Fatalf("TCPSetup: got %s, want Ready or an Error", m.Type())
		}
		if !tcpWithinBounds(*s) {
			t.Fatalf("the agent accepted a tcp trial outside its bounds or policy: %+v", *s)
		}
		type trial struct {
			id    uint64
			port  uint16
			conns int
		}
		run := []trial{{id, ready.AgentPort, streams}}
		if kind2 < 8 {
			s2 := &wire.TCPSetup{TrialID: id | 1<<32, Kind: kindOf(kind2), Streams: 1, WindowBytes: window2, Duration: dur}
			if s2.Kind == wire.TCPRTT {
				s2.Duration, s2.Probes = 0, 1
			}
			m, re := a.call(t, s2)
			switch {
			case re == nil:
				r2, ok := m.(*wire.Ready)
				if !ok {
					t.Fatalf("second TCPSetup: got %s, want Ready or an Error", m.Type())
				}
				if !tcpWithinBounds(*s2) || !tcpBesideOK(*s, *s2) {
					t.Fatalf("the agent accepted a second tcp trial it may not run beside the first: %+v beside %+v", *s2, *s)
				}
				run = append(run, trial{s2.TrialID, r2.AgentPort, 1})
			case re.Fatal:
				return
			}
		}
		var conns []*net.TCPConn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for _, tr := range run {
			dst := netip.AddrPortFrom(loopback, tr.port)
			for range tr.conns {
				c, err := trials.DialTCP(t.Context(), trials.TCPEnd{Addr: loopback}, dst, 0)
				if err != nil {
					t.Fatalf("connect to the trial's port %v: %v", dst, err)
				}
				conns = append(conns, c)
			}
		}
		for _, tr := range run {
			if m, re = a.call(t, &wire.Start{TrialID: tr.id}); re == nil {
				if _, ok := m.(*wire.Started); !ok {
					t.Fatalf("Start: got %s, want Started or an Error", m.Type())
				}
			} else if re.Fatal {
				return
			}
		}
		// This side's end: the agent's reader sees EOF, its writer and
		// echo the close.
		for _, c := range conns {
			c.Close()
		}
		for _, tr := range run {
			if m, re = a.call(t, &wire.Stop{TrialID: tr.id}); re == nil {
				if _, ok := m.(*wire.TCPResults); !ok {
					t.Fatalf("Stop: got %s, want TCPResults or an Error", m.Type())
				}
			} else if re.Fatal {
				return
			}
		}
	})
}

// tcpBesideOK reports whether the agent may run TCP trial b beside a: two
// transfers the opposite way, their windows within 64 MiB together.
func tcpBesideOK(a, b wire.TCPSetup) bool {
	transfer := func(k wire.TCPKind) bool { return k == wire.TCPToAgent || k == wire.TCPFromAgent }
	return transfer(a.Kind) && transfer(b.Kind) && a.Kind != b.Kind &&
		int64(a.Streams)*int64(a.WindowBytes)+int64(b.Streams)*int64(b.WindowBytes) <= 64<<20
}

// tcpWithinBounds reports whether s is a TCP trial the fuzzing agent (2 s
// --max-duration) may accept.
func tcpWithinBounds(s wire.TCPSetup) bool {
	if s.AgentPort != 0 && s.AgentPort < 1024 || s.WindowBytes < 0 || s.WindowBytes > 16<<20 {
		return false
	}
	if s.SampleEvery != 0 && (s.SampleEvery < int64(10*time.Millisecond) || s.SampleEvery > int64(24*time.Hour)) {
		return false
	}
	switch s.Kind {
	case wire.TCPRTT:
		return s.Streams == 1 && s.Probes >= 1 && s.Probes <= 10000 && s.Duration == 0
	case wire.TCPToAgent, wire.TCPFromAgent:
	default:
		return false
	}
	every := int64(time.Second)
	if s.SampleEvery != 0 {
		every = s.SampleEvery
	}
	return s.Streams >= 1 && s.Streams <= 64 && int64(s.Streams)*int64(s.WindowBytes) <= 64<<20 && s.Probes == 0 &&
		s.Duration >= int64(time.Millisecond) && s.Duration <= int64(2*time.Second) && s.Duration/every <= 4096
}
