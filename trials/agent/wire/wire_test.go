package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/trials"
)

func nonce(b byte) []byte { return bytes.Repeat([]byte{b}, NonceLen) }

func sampleSpec() trials.Spec {
	return trials.Spec{
		FrameSize: 512,
		Streams:   []trials.Stream{{ID: 1, Direction: trials.AtoB}, {ID: 2, Direction: trials.BtoA, Flows: 4}},
		RateFPS:   10000,
		Duration:  2 * time.Second,
		Settle:    500 * time.Millisecond,
		TagAfter:  time.Second,
	}
}

// sampleMessages has one valid message of every type.
func sampleMessages() []Message {
	return []Message{
		&Hello{Software: "rfc2544 test", Nonce: nonce(1)},
		&Challenge{Nonce: nonce(2)},
		&Auth{MAC: nonce(3)},
		&AuthOK{MAC: nonce(4), Agent: AgentInfo{Software: "rfc2544", PeerAddr: "127.0.0.1", MaxRateBps: 1e9,
			MaxDuration: int64(10 * time.Minute), ClockSync: ClockNone, KeepaliveInterval: int64(500 * time.Millisecond),
			PeerTimeout: int64(1500 * time.Millisecond), IdleTimeout: int64(time.Minute), SessionTimeout: int64(time.Hour)}},
		&TrialSetup{TrialID: 7, Spec: sampleSpec(), AgentPort: 0, ControllerPort: 40000, Latency: LatencyRoundTrip, ReflectFPS: 100},
		&Ready{TrialID: 7, AgentPort: 40001},
		&Start{TrialID: 7},
		&Started{TrialID: 7},
		&Stop{TrialID: 7, Sent: []StreamSent{{ID: 1, Sent: 20000}}},
		&Results{TrialID: 7, Streams: []trials.StreamResult{
			{ID: 1, Direction: trials.AtoB, Received: 20000, Latency: trials.LatencySummary{Count: 20000, MinNs: 1000, MeanNs: 1500.5, MaxNs: 9000,
				Buckets: []trials.LatencyBucket{{UpToNs: 1000, Cumulative: 10}, {UpToNs: 9000, Cumulative: 20000}}}, TaggedLatencyNs: -1, LastLossNs: -1},
			{ID: 2, Direction: trials.BtoA, Sent: 20000, IntendedFPS: 10000, OfferedFPS: 9999.5, TxSeconds: 2, TaggedLatencyNs: -1, LastLossNs: -1},
		}, Reflected: 200, Paths: trials.Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}},
		&Keepalive{},
		&Error{Code: CodePolicy, Message: "too fast", TrialID: 7},
		sampleTCPSetup(), sampleTCPResults(), // tcp_test.go
	}
}

func TestRoundTrip(t *testing.T) {
	for _, m := range sampleMessages() {
		t.Run(m.Type().String(), func(t *testing.T) {
			b, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := binary.BigEndian.Uint16(b[6:8]); got != uint16(m.Type()) {
				t.Errorf("header type %d, want %d", got, m.Type())
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d := cmp.Diff(m, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

// frame builds a message with the given header fields and body.
func frame(version uint16, typ Type, body string) []byte {
	b := make([]byte, HeaderLen, HeaderLen+len(body))
	putHeader(b, Header{Version: version, Type: typ, Length: uint32(len(body))})
	return append(b, body...)
}

func TestDecodeRejects(t *testing.T) {
	okHello := `{"software":"x","nonce":"` + strings.Repeat("A", 43) + `="}`
	long := frame(Version, TypeHello, "")
	binary.BigEndian.PutUint32(long[8:], MaxBody+1)
	tests := []struct {
		name string
		in   []byte
		is   error
		want string
	}{
		{name: "empty", in: nil, is: ErrMalformed, want: "shorter than the 12-byte header"},
		{name: "bad magic", in: []byte("GET / HTTP/1.1\r\n\r\n"), is: ErrMagic, want: "is this port an rfc2544 agent?"},
		{name: "oversized", in: long, is: ErrTooLong, want: "Hello of 1048577 bytes, above the limit of 1048576 bytes"},
		{name: "length mismatch", in: append(frame(Version, TypeHello, okHello), 'x'), is: ErrMalformed, want: "header says"},
		{name: "other version", in: frame(2, TypeHello, okHello), is: ErrVersion, want: "unsupported control protocol version 2: this side speaks version 1"},
		{name: "version zero", in: frame(0, TypeHello, okHello), is: ErrVersion, want: "version 0"},
		{name: "unknown type", in: frame(Version, 99, `{}`), is: ErrMalformed, want: "unknown message type 99"},
		{name: "type zero", in: frame(Version, 0, `{}`), is: ErrMalformed, want: "unknown message type 0"},
		{name: "not an object", in: frame(Version, TypeKeepalive, `[]`), is: ErrMalformed, want: "want a JSON object"},
		{name: "null body", in: frame(Version, TypeKeepalive, `null`), is: ErrMalformed, want: "want a JSON object"},
		{name: "empty body", in: frame(Version, TypeKeepalive, ``), is: ErrMalformed, want: "want a JSON object"},
		{name: "unknown field", in: frame(Version, TypeStart, `{"trial_id":1,"extra":2}`), is: ErrMalformed, want: `unknown field "extra"`},
		{name: "duplicate key", in: frame(Version, TypeStart, `{"trial_id":1,"trial_id":2}`), is: ErrMalformed, want: `key "trial_id" appears twice`},
		{name: "nested duplicate key", in: frame(Version, TypeTrialSetup,
			`{"trial_id":1,"spec":{"frame_size":64,"frame_size":128,"streams":[{"id":1,"direction":"A->B"}],"rate_fps":1,"duration_ns":1,"settle_ns":0},"latency":"round-trip"}`),
			is: ErrMalformed, want: `key "frame_size" appears twice`},
		{name: "trailing data", in: frame(Version, TypeStart, `{"trial_id":1} {}`), is: ErrMalformed, want: "data after the JSON object"},
		{name: "trailing garbage", in: frame(Version, TypeStart, `{"trial_id":1}x`), is: ErrMalformed, want: "data after the JSON object"},
		{name: "wrong field type", in: frame(Version, TypeStart, `{"trial_id":"1"}`), is: ErrMalformed, want: "cannot unmarshal string"},
		{name: "truncated json", in: frame(Version, TypeStart, `{"trial_id":1`), is: ErrMalformed, want: "unexpected EOF"},
		{name: "stream counted twice", in: frame(Version, TypeStop, `{"trial_id":1,"sent":[{"id":1,"sent":5},{"id":1,"sent":6}]}`), is: ErrMalformed, want: "stop sent: stream 1 twice"},
		{name: "zero trial id", in: frame(Version, TypeStop, `{"trial_id":0}`), is: ErrMalformed, want: "stop trial_id: must not be zero"},
		{name: "long software name", in: frame(Version, TypeHello, `{"software":"`+strings.Repeat("x", 257)+`","nonce":"`+strings.Repeat("A", 43)+`="}`),
			is: ErrMalformed, want: "hello software: 257 bytes, above the 256-byte limit"},
		{name: "short nonce", in: frame(Version, TypeHello, `{"software":"x","nonce":"AAAA"}`), is: ErrMalformed, want: "hello nonce: 3 bytes, want 32"},
		{name: "no mac", in: frame(Version, TypeAuth, `{}`), is: ErrMalformed, want: "auth mac: 0 bytes, want 32"},
		{name: "bad base64", in: frame(Version, TypeAuth, `{"mac":"!!"}`), is: ErrMalformed, want: "illegal base64"},
		{name: "bad direction", in: frame(Version, TypeTrialSetup,
			`{"trial_id":1,"spec":{"frame_size":64,"streams":[{"id":1,"direction":"A->C"}],"rate_fps":1,"duration_ns":1,"settle_ns":0},"latency":"round-trip"}`),
			is: ErrMalformed, want: `invalid direction "A->C"`},
		{name: "invalid spec", in: frame(Version, TypeTrialSetup, `{"trial_id":1,"spec":{"frame_size":64,"streams":[],"rate_fps":1,"duration_ns":1,"settle_ns":0},"latency":"round-trip"}`),
			is: ErrMalformed, want: "trial_setup spec: trial streams: at least one stream is needed"},
		{name: "bad latency mode", in: frame(Version, TypeTrialSetup,
			`{"trial_id":1,"spec":{"frame_size":64,"streams":[{"id":1,"direction":"A->B"}],"rate_fps":1,"duration_ns":1,"settle_ns":0},"latency":"both"}`),
			is: ErrMalformed, want: `trial_setup latency "both"`},
		{name: "reflect in one-way", in: frame(Version, TypeTrialSetup,
			`{"trial_id":1,"spec":{"frame_size":64,"streams":[{"id":1,"direction":"A->B"}],"rate_fps":1,"duration_ns":1,"settle_ns":0},"latency":"one-way","reflect_fps":5}`),
			is: ErrMalformed, want: "only round-trip latency reflects"},
		{name: "empty error code", in: frame(Version, TypeError, `{"message":"x"}`), is: ErrMalformed, want: "error code: empty"},
		{name: "bad clock sync", in: frame(Version, TypeAuthOK, `{"mac":"`+strings.Repeat("A", 43)+`=","agent":{"max_rate_bps":1,"clock_sync":"gps"}}`),
			is: ErrMalformed, want: `clock_sync "gps"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(tc.in)
			if err == nil {
				t.Fatalf("Decode accepted %q as %#v", tc.in, m)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// An Error message of any version decodes, so a peer learns why it was
// refused; the version mismatch is reported with it.
func TestDecodeErrorOfOtherVersion(t *testing.T) {
	m, err := Decode(frame(9, TypeError, `{"code":"version","message":"I speak 9"}`))
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got != 9 {
		t.Fatalf("error %v, want a *VersionError for version 9", err)
	}
	if d := cmp.Diff(&Error{Code: CodeVersion, Message: "I speak 9"}, m); d != "" {
		t.Errorf("message (-want +got):\n%s", d)
	}
}

// TestMaxResultsFit: Results of 16 streams, each with a 1024-bucket latency
// histogram (trials' histograms have well under 100 distinct buckets), fit
// the body limit.
func TestMaxResultsFit(t *testing.T) {
	r := &Results{TrialID: 1}
	for i := range 16 {
		s := trials.StreamResult{ID: uint16(i), Direction: trials.AtoB, Received: 1 << 40, TaggedLatencyNs: -1, LastLossNs: -1}
		s.Latency = trials.LatencySummary{Count: 1 << 40, MinNs: 1, MeanNs: 123456.789, MaxNs: 1 << 40}
		for j := range 1024 {
			s.Latency.Buckets = append(s.Latency.Buckets, trials.LatencyBucket{UpToNs: int64(j) * 1_000_003, Cumulative: uint64(j) * 268_435_459})
		}
		r.Streams = append(r.Streams, s)
	}
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("16 streams × 1024 buckets: %d bytes of %d", len(b), MaxBody)
	if _, err := Decode(b); err != nil {
		t.Fatal(err)
	}
	// Far more does not: Encode refuses rather than send what the peer
	// would reject.
	for i := range 48 {
		r.Streams = append(r.Streams, r.Streams[i%16])
	}
	if _, err := Encode(r); !errors.Is(err, ErrTooLong) {
		t.Errorf("Encode of %d streams: error %v, want ErrTooLong", len(r.Streams), err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range sampleMessages() {
		b, err := Encode(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(frame(2, TypeError, `{"code":"version","message":"x"}`))
	f.Add(frame(Version, TypeStart, `{"trial_id":1,"trial_id":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			if m != nil {
				if _, ok := m.(*Error); !ok || !errors.Is(err, ErrVersion) {
					t.Fatalf("Decode returned %T with error %v", m, err)
				}
			}
			return
		}
		b2, err := Encode(m)
		if err != nil {
			t.Fatalf("Encode of a decoded %s: %v", m.Type(), err)
		}
		m2, err := Decode(b2)
		if err != nil {
			t.Fatalf("Decode of re-encoded %s: %v\n%q", m.Type(), err, b2)
		}
		if d := cmp.Diff(m, m2); d != "" {
			t.Fatalf("round trip of %s (-first +second):\n%s", m.Type(), d)
		}
	})
}

var update = flag.Bool("update", false, "rewrite testdata/fuzz/FuzzDecode from sampleMessages and corpusExtras")

// corpusExtras are malformed seeds for the fuzz corpus.
func corpusExtras() map[string][]byte {
	long := frame(Version, TypeHello, "")
	binary.BigEndian.PutUint32(long[8:], MaxBody+1)
	return map[string][]byte{
		"bad-magic":       []byte("GET / HTTP/1.1\r\n\r\n"),
		"oversized":       long,
		"other-version":   frame(2, TypeHello, `{"software":"x","nonce":""}`),
		"error-v9":        frame(9, TypeError, `{"code":"version","message":"I speak 9"}`),
		"unknown-field":   frame(Version, TypeStart, `{"trial_id":1,"extra":2}`),
		"duplicate-field": frame(Version, TypeStart, `{"trial_id":1,"trial_id":2}`),
		"trailing":        frame(Version, TypeStart, `{"trial_id":1} {}`),
		"unknown-type":    frame(Version, 99, `{}`),
		"tcp-streams":     frame(Version, TypeTCPSetup, `{"trial_id":1,"kind":"to-agent","streams":65,"window_bytes":0,"duration_ns":1000000000,"probes":0,"sample_every_ns":0,"agent_port":0}`),
		"tcp-kind":        frame(Version, TypeTCPSetup, `{"trial_id":1,"kind":"both","streams":1,"window_bytes":0,"duration_ns":1000000000,"probes":0,"sample_every_ns":0,"agent_port":0}`),
	}
}

// TestFuzzCorpus keeps the checked-in seed corpus in step with the
// messages: every valid seed decodes, every malformed one is refused.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	seeds := map[string][]byte{}
	for _, m := range sampleMessages() {
		b, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		seeds["valid-"+strings.ToLower(m.Type().String())] = b
	}
	for name, b := range corpusExtras() {
		seeds["bad-"+strings.TrimPrefix(name, "bad-")] = b
	}
	if *update {
		os.MkdirAll(dir, 0o755)
		for name, b := range seeds {
			if err := os.WriteFile(filepath.Join(dir, name), fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, b := range seeds {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("seed %s: %v (run go test -run TestFuzzCorpus -update)", name, err)
			continue
		}
		if want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b); string(got) != want {
			t.Errorf("seed %s is stale (run go test -run TestFuzzCorpus -update)", name)
		}
		_, err = Decode(b)
		if valid := strings.HasPrefix(name, "valid-"); valid != (err == nil) {
			t.Errorf("seed %s: Decode error %v", name, err)
		}
	}
}
