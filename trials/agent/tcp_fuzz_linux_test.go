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
// TCPSetup, the trial's connections, Start and Stop with fuzzed TCP trials:
// the agent must answer each message (Ready, Started, TCPResults or an
// Error), never crash, and never accept a trial outside the protocol's
// bounds or its policy (checked here independently of the agent's code).
func FuzzTCPSession(f *testing.F) {
	// kind, streams, window, duration, probes, sample every, agent port.
	f.Add(uint8(0), 1, 0, int64(0), 5, int64(0), uint16(0))
	f.Add(uint8(1), 2, 65536, int64(200e6), 0, int64(50e6), uint16(0))
	f.Add(uint8(2), 3, 0, int64(300e6), 0, int64(0), uint16(0))
	f.Add(uint8(2), 65, 1<<30, int64(1<<62), 0, int64(1), uint16(22))
	f.Add(uint8(1), 64, 16<<20, int64(1e9), 0, int64(0), uint16(0))
	f.Add(uint8(0), 1, 0, int64(0), 1<<40, int64(0), uint16(0))
	f.Add(uint8(2), 1, 0, int64(3e9), 0, int64(0), uint16(0))
	f.Add(uint8(7), 1, 0, int64(1e9), 0, int64(0), uint16(0))
	f.Add(uint8(1), 1, 0, int64(2e9), 0, int64(10e6), uint16(40123))
	a := startFuzzAgent(f)
	var id uint64
	kinds := []wire.TCPKind{wire.TCPRTT, wire.TCPToAgent, wire.TCPFromAgent}
	f.Fuzz(func(t *testing.T, kind uint8, streams, window int, dur int64, probes int, every int64, port uint16) {
		k := wire.TCPKind("kind-x")
		if int(kind) < len(kinds) {
			k = kinds[kind]
		}
		id++
		s := &wire.TCPSetup{TrialID: id, Kind: k, Streams: streams, WindowBytes: window, Duration: dur, Probes: probes, SampleEvery: every, AgentPort: port}
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
		dst := netip.AddrPortFrom(loopback, ready.AgentPort)
		var conns []*net.TCPConn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range streams {
			c, err := trials.DialTCP(t.Context(), trials.TCPEnd{Addr: loopback}, dst, 0)
			if err != nil {
				t.Fatalf("connect to the trial's port %v: %v", dst, err)
			}
			conns = append(conns, c)
		}
		if m, re = a.call(t, &wire.Start{TrialID: id}); re == nil {
			if _, ok := m.(*wire.Started); !ok {
				t.Fatalf("Start: got %s, want Started or an Error", m.Type())
			}
		} else if re.Fatal {
			return
		}
		// This side's end: the agent's reader sees EOF, its writer and
		// echo the close.
		for _, c := range conns {
			c.Close()
		}
		if m, re = a.call(t, &wire.Stop{TrialID: id}); re == nil {
			if _, ok := m.(*wire.TCPResults); !ok {
				t.Fatalf("Stop: got %s, want TCPResults or an Error", m.Type())
			}
		}
	})
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
