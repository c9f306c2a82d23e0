package wire

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/trials"
)

func sampleTCPSetup() *TCPSetup {
	return &TCPSetup{TrialID: 9, Kind: TCPFromAgent, Streams: 2, WindowBytes: 256 << 10, Duration: int64(10 * time.Second), SampleEvery: int64(time.Second)}
}

func sampleTCPResults() *TCPResults {
	return &TCPResults{TrialID: 9, WrittenBytes: 12_500_000, Refused: 1, Send: trials.TCPRun{Streams: 2, WindowBytes: 256 << 10, MSSBytes: 1448,
		Bytes: 12_500_000, Seconds: 10.01, Bps: 9.99e6, BytesSent: 12_600_000, BytesRetrans: 100_000, MeanRTTNs: 20e6,
		Samples: []trials.TCPSample{{AtS: 1, Bps: 10e6, RTTNs: 20e6, CwndBytes: 60000, RetransBytes: 0, PeerWindowBytes: 524288}}}}
}

// tcpSetupJSON is a TCPSetup body with one field replaced.
func tcpSetupJSON(field, value string) []byte {
	fields := [][2]string{{"trial_id", "1"}, {"kind", `"to-agent"`}, {"streams", "2"}, {"window_bytes", "65536"}, {"duration_ns", "1000000000"},
		{"probes", "0"}, {"sample_every_ns", "0"}, {"agent_port", "0"}}
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fields {
		if f[0] == field {
			f[1] = value
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + f[0] + `":` + f[1])
	}
	b.WriteString("}")
	return frame(Version, TypeTCPSetup, b.String())
}

// TestTCPSetupBounds: every TCPSetup field outside the protocol's bounds is
// a malformed message naming the field, before the agent opens anything.
func TestTCPSetupBounds(t *testing.T) {
	if _, err := Decode(tcpSetupJSON("", "")); err != nil {
		t.Fatalf("the base setup: %v", err)
	}
	tests := []struct{ field, value, want string }{
		{"trial_id", "0", "tcp_setup trial_id: must not be zero"},
		{"kind", `"both"`, `tcp_setup kind "both"`},
		{"kind", `""`, `tcp_setup kind ""`},
		{"streams", "0", "tcp_setup streams 0: want 1 to 64"},
		{"streams", "65", "tcp_setup streams 65: want 1 to 64"},
		{"streams", "-1", "tcp_setup streams -1"},
		{"streams", "9223372036854775807", "tcp_setup streams 9223372036854775807"},
		{"window_bytes", "-1", "tcp_setup window_bytes -1"},
		{"window_bytes", "16777217", "tcp_setup window_bytes 16777217"},
		{"duration_ns", "0", "tcp_setup duration_ns 0: want 1 ms to 24h0m0s"},
		{"duration_ns", "-5", "tcp_setup duration_ns -5"},
		{"duration_ns", "86400000000001", "tcp_setup duration_ns 86400000000001"},
		{"probes", "3", "tcp_setup probes 3: only an rtt trial has probes"},
		{"sample_every_ns", "1000", "tcp_setup sample_every_ns 1000"},
		{"sample_every_ns", "-1", "tcp_setup sample_every_ns -1"},
		{"agent_port", "80", "tcp_setup agent_port 80"},
		{"agent_port", "65536", "cannot unmarshal number 65536"},
		{"streams", "1.5", "cannot unmarshal number 1.5"},
	}
	for _, tc := range tests {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			m, err := Decode(tcpSetupJSON(tc.field, tc.value))
			if err == nil {
				t.Fatalf("accepted %#v", m)
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		m    TCPSetup
		want string
	}{
		{TCPSetup{TrialID: 1, Kind: TCPToAgent, Streams: 8, WindowBytes: 16 << 20, Duration: 1e9}, "window_bytes 16777216 × streams 8: 134217728 bytes, above the agent's 67108864"},
		{TCPSetup{TrialID: 1, Kind: TCPRTT, Streams: 2, Probes: 5}, "an rtt trial has 1 connection"},
		{TCPSetup{TrialID: 1, Kind: TCPRTT, Streams: 1, Probes: 0}, "tcp_setup probes 0: want 1 to 10000"},
		{TCPSetup{TrialID: 1, Kind: TCPRTT, Streams: 1, Probes: 10001}, "tcp_setup probes 10001"},
		{TCPSetup{TrialID: 1, Kind: TCPRTT, Streams: 1, Probes: 5, Duration: 1e9}, "an rtt trial has none"},
		{TCPSetup{TrialID: 1, Kind: TCPFromAgent, Streams: 1, Duration: int64(time.Hour), SampleEvery: int64(10 * time.Millisecond)}, "360000 samples"},
	} {
		if err := tc.m.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.m, err, tc.want)
		}
	}
}

func TestTCPResultsBounds(t *testing.T) {
	r := sampleTCPResults()
	r.Send.Samples = make([]trials.TCPSample, MaxTCPSamples+3)
	if err := r.Validate(); err == nil || !strings.Contains(err.Error(), "tcp_results send samples: 4099") {
		t.Errorf("too many samples: error %v", err)
	}
	r = sampleTCPResults()
	r.Send.Bps = math.Inf(1)
	if err := r.Validate(); err == nil {
		t.Error("infinite bps accepted")
	}
	r = sampleTCPResults()
	r.ReceiveSpanNs = -1
	if err := r.Validate(); err == nil {
		t.Error("negative span accepted")
	}
	// The largest TCPResults fits the body limit.
	r = sampleTCPResults()
	for range MaxTCPSamples + 2 {
		r.Send.Samples = append(r.Send.Samples, trials.TCPSample{AtS: 86399.123456789, Bps: 9.87654321e9, RTTNs: 1 << 40, CwndBytes: 1 << 40, RetransBytes: 1 << 60, PeerWindowBytes: 1 << 40})
	}
	r.Send.Samples = r.Send.Samples[:MaxTCPSamples+2]
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples: %d bytes of %d", len(r.Send.Samples), len(b), MaxBody)
	if _, err := Decode(b); err != nil {
		t.Fatal(err)
	}
}

func TestTCPBudget(t *testing.T) {
	if got, want := TCPBudget(100e6, 10*time.Second), uint64(117_500_000); got != want {
		t.Errorf("100 Mbit/s for 10 s: %d bytes, want %d", got, want)
	}
	if TCPBudget(math.NaN(), time.Second) != 0 || TCPBudget(1e9, -time.Second) != 0 || TCPBudget(math.MaxFloat64, time.Hour) != 1<<63 {
		t.Error("TCPBudget does not saturate")
	}
}
