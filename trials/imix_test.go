package trials

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rfc2544/rfc2544/framing"
)

func TestStreamSizes(t *testing.T) {
	if diff := cmp.Diff([]int{512, 512, 512}, streamSizes(512, 3)); diff != "" {
		t.Errorf("streamSizes(512, 3) (-want +got):\n%s", diff)
	}
	pat := framing.IMIX.Pattern()
	for _, flows := range []int{0, 1, 2, 5} {
		got := streamSizes(framing.SizeIMIX, flows)
		if len(got) != len(pat)*max(flows, 1) {
			t.Fatalf("flows %d: %d templates, want %d", flows, len(got), len(pat)*max(flows, 1))
		}
		// Frame n uses template n mod len: its size must be the
		// pattern's n mod 12 whatever the number of flows.
		for n := range 3 * len(got) {
			if got[n%len(got)] != pat[n%len(pat)] {
				t.Fatalf("flows %d: frame %d gets %d bytes, pattern says %d", flows, n, got[n%len(got)], pat[n%len(pat)])
			}
		}
	}
}

// A mix trial's receiver takes each frame at its place in the pattern,
// counts a frame of another size as bad, and attributes what it received
// to the sizes.
func TestRxTrialMix(t *testing.T) {
	st := newStreamState(Stream{ID: 3, Direction: AtoB})
	tr := newRxTrial(5, framing.SizeIMIX, []*streamState{st})
	tr.deadlineNs.Store(1 << 62)
	pat := framing.IMIX.Pattern()
	const rounds = 4
	for n := range rounds * len(pat) {
		size := pat[n%len(pat)]
		if size == 570 && n < len(pat) {
			continue // the DUT drops the 570-byte frames of the first round
		}
		f := testFrame(t, size, framing.Signature{RunID: 5, StreamID: 3, Seq: uint64(n), TxNs: 1})
		tr.frame(f, len(f), 1+int64(size)) // latency: the size in ns
	}
	// A 64-byte frame where the pattern has 1518 (frame 6): wrong size.
	f := testFrame(t, 64, framing.Signature{RunID: 5, StreamID: 3, Seq: 6 + uint64(rounds*len(pat)), TxNs: 1})
	tr.frame(f, len(f), 2)
	if st.badLen != 1 {
		t.Errorf("badLen %d, want 1", st.badLen)
	}
	st.queued, st.sent = rounds*12+7, rounds*12+7
	r := st.result(0)
	want := []SizeCount{{64, 4*7 + 4, 4 * 7, nil}, {570, 4*4 + 2, 3 * 4, nil}, {1518, 4 + 1, 4, nil}}
	if diff := cmp.Diff(want, r.Sizes, cmpopts.IgnoreFields(SizeCount{}, "Latency")); diff != "" {
		t.Errorf("sizes (-want +got):\n%s", diff)
	}
	// Each size timed on its own: its frames, at its latency (the size
	// in ns here), lean (no histogram).
	for _, c := range r.Sizes {
		l := c.Latency
		if l == nil || l.Count != c.Received || l.MinNs != int64(c.FrameSize) || l.MaxNs != int64(c.FrameSize) ||
			l.MeanNs != float64(c.FrameSize) || l.P99Ns != int64(c.FrameSize) || l.HDR != "" || l.Buckets != nil {
			t.Errorf("size %d: latency %+v, want %d frames at %d ns, no HDR or buckets", c.FrameSize, l, c.Received, c.FrameSize)
		}
	}
	if r.Latency.MinNs != 64 || r.Latency.MaxNs != 1518 {
		t.Errorf("the stream's latency %d … %d ns, want 64 … 1518 (every size)", r.Latency.MinNs, r.Latency.MaxNs)
	}
	if r.Received != rounds*12-4 {
		t.Errorf("received %d, want %d", r.Received, rounds*12-4)
	}

	// The UDP receiver's unit: payload sizes.
	st2 := newStreamState(Stream{ID: 1, Direction: AtoB})
	tu := newRxTrial(5, framing.SizeIMIX, []*streamState{st2})
	tu.useMixPayload(framing.SizeIMIX, framing.IPv4UDP)
	tu.deadlineNs.Store(1 << 62)
	for n, size := range pat {
		p := make([]byte, framing.UDPPayloadSize(size, framing.IPv4UDP, false))
		framing.EncodeSignature(p, framing.Signature{RunID: 5, StreamID: 1, Seq: uint64(n), TxNs: 1})
		tu.countLen(p, false, len(p), 2)
	}
	p := make([]byte, 100)
	framing.EncodeSignature(p, framing.Signature{RunID: 5, StreamID: 1, Seq: 12, TxNs: 1})
	tu.countLen(p, true, 100, 2) // sizeOK of a one-size receiver does not count for a mix
	if st2.received != 12 || st2.badLen != 1 {
		t.Errorf("udp: received %d bad %d, want 12 and 1", st2.received, st2.badLen)
	}
}

func TestSpecValidateMix(t *testing.T) {
	s := Spec{FrameSize: framing.SizeIMIX, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: 10, Duration: 1e9}
	if err := s.Validate(); err != nil {
		t.Errorf("imix spec: %v", err)
	}
	s.FrameSize = -1
	if err := s.Validate(); err == nil {
		t.Errorf("frame size -1 accepted")
	}
}
