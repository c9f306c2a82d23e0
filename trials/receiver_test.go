package trials

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/framing"
	"golang.org/x/net/bpf"
)

func TestSeqWindow(t *testing.T) {
	type counts struct{ Dup, Reordered int }
	tests := []struct {
		name        string
		seqs        []uint64
		sent        uint64
		want        counts
		wantMissing int64
	}{
		{name: "in order", seqs: []uint64{0, 1, 2, 3}, sent: 4, wantMissing: -1},
		{name: "tail lost", seqs: []uint64{0, 1, 2}, sent: 5, wantMissing: 4},
		{name: "gap", seqs: []uint64{0, 1, 3, 4}, sent: 5, wantMissing: 2},
		{name: "reordered", seqs: []uint64{0, 2, 1, 3}, sent: 4, want: counts{Reordered: 1}, wantMissing: -1},
		{name: "duplicate", seqs: []uint64{0, 1, 1, 2, 0}, sent: 3, want: counts{Dup: 2}, wantMissing: -1},
		{name: "gap slides out of the window", seqs: append([]uint64{0}, seqRange(2, 3*windowWords*64)...), sent: 3 * windowWords * 64, wantMissing: 1},
		{name: "jump far ahead", seqs: []uint64{0, 10 * windowWords * 64}, sent: 10*windowWords*64 + 1, wantMissing: 10*windowWords*64 - 1},
		{name: "too old to check: reordered, not dup", seqs: append(seqRange(0, 2*windowWords*64), 5, 5), sent: 2 * windowWords * 64,
			want: counts{Reordered: 2}, wantMissing: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w seqWindow
			w.reset()
			var got counts
			for _, s := range tt.seqs {
				dup, reo := w.mark(s)
				if dup {
					got.Dup++
				}
				if reo {
					got.Reordered++
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			if m := w.highestMissing(tt.sent); m != tt.wantMissing {
				t.Errorf("highestMissing(%d) = %d, want %d", tt.sent, m, tt.wantMissing)
			}
		})
	}
}

func seqRange(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestLatencyRecorder(t *testing.T) {
	r := newLatencyRecorder()
	// seq: latency; seq 3 lost, so IPDV skips 2→4.
	in := []struct {
		seq uint64
		d   int64
	}{{0, 1000}, {1, 1200}, {2, 1100}, {4, 5000}, {5, 4000}}
	for _, x := range in {
		r.record(x.seq, x.d)
	}
	s := r.summary()
	// IPDV over consecutive sequence numbers: |200|, |−100|, |−1000|.
	j := 0.0
	for _, d := range []float64{200, 100, 3900, 1000} {
		j += (d - j) / 16
	}
	want := LatencySummary{Count: 5, MinNs: 1000, MeanNs: 2460, MaxNs: 5000, P50Ns: 1200, P90Ns: 5000, P99Ns: 5000, P999Ns: 5000,
		PDVP999Ns: 4000, IPDVMeanAbsNs: 1300.0 / 3, IPDVMaxAbsNs: 1000, JitterNs: float64(int64(j*10+0.5)) / 10}
	if s.HDR == "" {
		t.Error("summary without its histogram (HDR)")
	}
	s.Buckets, s.HDR = nil, ""
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if b := r.summary().Buckets; len(b) == 0 || b[len(b)-1].Cumulative != 5 || b[len(b)-1].UpToNs != 5000 {
		t.Errorf("buckets %+v: want a CDF ending at (5000 ns, 5)", b)
	}
	if got := newLatencyRecorder().summary(); got.Count != 0 || got.Buckets != nil {
		t.Errorf("empty summary = %+v, want zero", got)
	}
}

// testFrame builds a stamped 64-byte test frame.
func testFrame(t testing.TB, size int, sig framing.Signature) []byte {
	t.Helper()
	tpl, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("198.18.1.2"), DstIP: netip.MustParseAddr("198.19.1.2"), FrameSize: size})
	if err != nil {
		t.Fatal(err)
	}
	f := make([]byte, tpl.Len())
	tpl.WriteFrame(f, sig)
	return f
}

func TestRxTrialFrame(t *testing.T) {
	st := newStreamState(Stream{ID: 7, Direction: AtoB})
	st.tagSeq.Store(2)
	tr := newRxTrial(9, 64, []*streamState{st})
	tr.deadlineNs.Store(1_000_000)
	feed := func(seq uint64, runID uint8, stream uint16, txNs, rxNs int64) {
		f := testFrame(t, 64, framing.Signature{RunID: runID, StreamID: stream, Seq: seq, TxNs: txNs})
		tr.frame(f, len(f), rxNs)
	}
	feed(0, 9, 7, 100, 1100)
	feed(1, 9, 7, 200, 1300)
	feed(1, 9, 7, 200, 1400)      // duplicate
	feed(3, 9, 7, 400, 1500)      // 2 missing for now
	feed(2, 9, 7, 300, 1600)      // reordered, tagged
	feed(4, 8, 7, 500, 1700)      // other run: ignored
	feed(4, 9, 8, 500, 1700)      // unknown stream
	feed(4, 9, 7, 500, 2_000_000) // after the deadline: late
	short := testFrame(t, 256, framing.Signature{RunID: 9, StreamID: 7, Seq: 5})
	tr.frame(short[:rxSnapLen], len(short), 1800) // wrong length
	got := []uint64{st.received, st.duplicate, st.reordered, st.late, st.badLen, tr.foreign}
	if diff := cmp.Diff([]uint64{4, 1, 1, 1, 1, 1}, got); diff != "" {
		t.Errorf("received, dup, reordered, late, badLen, foreign (-want +got):\n%s", diff)
	}
	if st.taggedNs != 1300 {
		t.Errorf("tagged latency %d, want 1300", st.taggedNs)
	}
	st.sent, st.queued = 5, 5
	st.pacer = Pacer{RateFPS: 1000, Total: 5}
	r := st.result(1000)
	if r.Lost != 1 || r.LastLossNs != int64(4*1e6) {
		t.Errorf("lost %d last loss %d ns, want 1 and 4 ms (frame 4)", r.Lost, r.LastLossNs)
	}
}

func TestRxTrialFrameAllocs(t *testing.T) {
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	tr := newRxTrial(1, 64, []*streamState{st})
	f := testFrame(t, 64, framing.Signature{RunID: 1, StreamID: 1, Seq: 0, TxNs: 5})
	seq := uint64(0)
	off := framing.UDPPayloadOffset(framing.IPv4UDP, false)
	// Each frame is sent 2 ms after the previous: 20 s of send time, so the
	// latency series (1024 bins of 10 ms) has to widen its bins on the way.
	if n := testing.AllocsPerRun(10000, func() {
		seq++
		binary.BigEndian.PutUint32(f[off+6:], uint32(seq))
		txNs := 5 + int64(seq)*int64(2*time.Millisecond)
		binary.BigEndian.PutUint64(f[off+10:], uint64(txNs))
		tr.frame(f, len(f), txNs+1000)
	}); n != 0 {
		t.Errorf("frame allocates %v times per frame, want 0", n)
	}
	rec := st.trend
	var n uint64
	for _, b := range rec.bins[:rec.used] {
		n += b.n
	}
	if rec.widthNs != 20*int64(time.Millisecond) || n != st.received || rec.bins[1].min != 1000 {
		t.Errorf("series: bins of %d ns counting %d frames (received %d), bin 1 min %d ns; want 20 ms bins, all frames, 1000 ns",
			rec.widthNs, n, st.received, rec.bins[1].min)
	}
	// A flat trend keeps its fit and drops the series (TrimSeries).
	tr1 := st.result(1000).Trend
	if tr1 == nil || tr1.BinNs != 20*int64(time.Millisecond) || tr1.SlopeNsPerS != 0 || tr1.Count != nil {
		t.Fatalf("trend %+v: want 20 ms bins, slope 0, no series kept", tr1)
	}
}

func TestARPRoundTrip(t *testing.T) {
	want := arpPacket{Op: arpRequest, SenderHW: [6]byte{2, 0, 0, 0, 0, 1}, SenderIP: netip.MustParseAddr("198.18.1.2"),
		TargetIP: netip.MustParseAddr("198.18.1.1")}
	b := make([]byte, arpFrameLen)
	if n := putARP(b, broadcastMAC, want.SenderHW, want); n != 60 {
		t.Fatalf("frame length %d, want 60", n)
	}
	got, ok := parseARP(b)
	if !ok {
		t.Fatal("parseARP: not ok")
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, bad := range [][]byte{b[:41], append(append([]byte{}, b[:12]...), 0x08, 0x00)} {
		if _, ok := parseARP(bad); ok {
			t.Errorf("parseARP(%x) ok, want not", bad)
		}
	}
}

func TestReceiveFilter(t *testing.T) {
	arp := make([]byte, arpFrameLen)
	putARP(arp, broadcastMAC, [6]byte{2, 0, 0, 0, 0, 1}, arpPacket{Op: arpRequest, SenderIP: netip.MustParseAddr("198.18.1.1"),
		TargetIP: netip.MustParseAddr("198.18.1.2")})
	run5 := testFrame(t, 64, framing.Signature{RunID: 5, StreamID: 1})
	run6 := testFrame(t, 1518, framing.Signature{RunID: 6, StreamID: 1})
	notSig := testFrame(t, 64, framing.Signature{RunID: 5})
	notSig[framing.UDPPayloadOffset(framing.IPv4UDP, false)] = 0
	tcp := append([]byte{}, run5...)
	tcp[23] = 6
	ns := make([]byte, ndFrameLen)
	putND(ns, ndSolicit, [6]byte{2, 0, 0, 0, 0, 1}, netip.MustParseAddr("2001:2:0:1::1"), netip.MustParseAddr("2001:2:0:1::2"),
		netip.Addr{}, [6]byte{})
	tpl6, err := framing.NewTemplate(framing.TemplateConfig{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("2001:2:0:1::2"), DstIP: netip.MustParseAddr("2001:2:0:8001::2"), FrameSize: 84})
	if err != nil {
		t.Fatal(err)
	}
	v6 := make([]byte, tpl6.Len())
	tpl6.WriteFrame(v6, framing.Signature{RunID: 5, StreamID: 1})
	tests := []struct {
		name  string
		runID uint8
		frame []byte
		want  int
	}{
		{name: "arp while idle", runID: 0, frame: arp, want: rxSnapLen},
		{name: "test frame while idle", runID: 0, frame: run5, want: 0},
		{name: "arp", runID: 5, frame: arp, want: rxSnapLen},
		{name: "this run", runID: 5, frame: run5, want: rxSnapLen},
		{name: "other run", runID: 5, frame: run6, want: 0},
		{name: "big frame of this run", runID: 6, frame: run6, want: rxSnapLen},
		{name: "no marker", runID: 5, frame: notSig, want: 0},
		{name: "not udp", runID: 5, frame: tcp, want: 0},
		{name: "neighbor solicitation while idle", runID: 0, frame: ns, want: rxSnapLen},
		{name: "ipv6 test frame", runID: 5, frame: v6, want: rxSnapLen},
		{name: "ipv6 test frame while idle", runID: 0, frame: v6, want: 0},
		{name: "ipv6 test frame of another run", runID: 4, frame: v6, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := receiveFilter(tt.runID)
			if err != nil {
				t.Fatal(err)
			}
			insns, ok := bpf.Disassemble(raw)
			if !ok {
				t.Fatal("disassemble")
			}
			vm, err := bpf.NewVM(insns)
			if err != nil {
				t.Fatalf("NewVM: %v", err)
			}
			got, err := vm.Run(tt.frame)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("filter keeps %d bytes, want %d", got, tt.want)
			}
		})
	}
}

func TestCeilingFor(t *testing.T) {
	c := map[int]float64{64: 1e6, 1518: 1e5}
	tests := []struct {
		name string
		f    int
		want float64
	}{
		{name: "exact", f: 64, want: 1e6},
		{name: "interpolated in bit/s", f: 791, want: (64e6 + (151.8e6-64e6)*727/1454) / 791},
		{name: "below", f: 60},
		{name: "above", f: 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ceilingFor(c, tt.f); got-tt.want > 1e-6 || tt.want-got > 1e-6 {
				t.Errorf("ceilingFor(%d) = %g, want %g", tt.f, got, tt.want)
			}
		})
	}
}

func TestCeilingReasons(t *testing.T) {
	c := map[int]float64{64: 600000}
	tests := []struct {
		name  string
		loads [2]float64
		loss  float64
		want  int
	}{
		{name: "below the ceiling", loads: [2]float64{500000, 0}, loss: 5},
		{name: "at the ceiling, no loss", loads: [2]float64{600000, 0}},
		{name: "at the ceiling with loss", loads: [2]float64{600000, 0}, loss: 0.1, want: 1},
		{name: "within the tolerance", loads: [2]float64{595000, 0}, loss: 0.1, want: 1},
		{name: "both ports", loads: [2]float64{700000, 700000}, loss: 1, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ceilingReasons(c, 64, tt.loads, tt.loss, 0.01); len(got) != tt.want {
				t.Errorf("ceilingReasons = %q, want %d reasons", got, tt.want)
			}
		})
	}
	if got := ceilingReasons(nil, 64, [2]float64{1e9, 0}, 50, 0.01); got != nil {
		t.Errorf("no calibration: %q, want none", got)
	}
}
