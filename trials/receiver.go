package trials

import (
	"encoding/binary"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// streamState is one stream of a running trial. The transmit side is owned
// by its port's transmitter until it finishes; the receive side by the
// receiving port's loop while the trial is attached.
type streamState struct {
	spec Stream

	// Transmit side.
	pacer   Pacer
	tpls    []*framing.Template // one per flow
	queued  uint64              // frames handed to the ring (next sequence number)
	sent    uint64              // frames the kernel accepted
	failed  uint64              // frames the kernel refused
	firstNs int64               // Unix ns of the first frame's stamp; 0 = none yet
	lastNs  int64               // Unix ns of the last frame's stamp
	drainNs int64               // Unix ns the transmit ring was empty again after the last frame; 0 = at once
	maxLag  time.Duration       // furthest behind schedule a batch went out
	catch   CatchUp             // the pacer's catch-up state (Pacer.Step)
	// peakOverspeed and burst record the catch-up (StreamResult).
	peakOverspeed float64
	burst         uint64
	// sentPub is sent as the transmitter last published it (paceLoop, once
	// per round), for the interval sampler.
	sentPub atomic.Uint64
	// echo marks a two-host receive half's reflected copy of a stream it
	// sent (round-trip latency): not received traffic, so not in the
	// interval counts.
	echo bool
	// tagSeq is the sequence number of the latency-tagged frame, set by the
	// transmitter before that frame is handed to the kernel.
	tagSeq atomic.Uint64

	// Receive side.
	received, reordered, duplicate, late, badLen uint64
	win                                          seqWindow
	// mixRx counts, for a frame-size mix, the frames received at each
	// position of the mix's pattern (framing.Mix.Pattern); nil otherwise.
	mixRx      []uint64
	mixPattern []int // the frame sizes of the pattern, when mixRx is set
	// mixLat times, for a frame-size mix, each of its sizes (in the order
	// they first appear in the pattern); mixSizeOf maps a pattern position
	// to its size's index there. Nil otherwise.
	mixLat    []*latencyRecorder
	mixSizeOf []int
	// flowTop is, per flow of a multi-flow stream, the highest sequence
	// number received + 1: frame n belongs to flow n mod Flows (both
	// transmitters cycle the flows frame by frame), and reordering is
	// judged within its flow, since a multi-queue DUT need not keep the
	// order between flows. Nil for a single flow.
	flowTop  []uint64
	lat      *latencyRecorder
	trend    *trendRecorder
	taggedNs int64
}

func newStreamState(s Stream) *streamState {
	st := &streamState{spec: s, lat: newLatencyRecorder(), trend: newTrendRecorder(), taggedNs: -1}
	st.win.reset()
	if s.Flows > 1 {
		st.flowTop = make([]uint64, s.Flows)
	}
	st.tagSeq.Store(math.MaxUint64)
	return st
}

// rxTrial is what one receiving port counts during a trial.
type rxTrial struct {
	runID    uint8
	frameLen int // expected captured frame length (FrameSize − 4)
	// mixLens is, for a frame-size mix, the expected length of the frame
	// at each position of the mix's pattern (frame n has mixLens[n mod
	// len]), in the unit the receiver measures: frame length without FCS
	// (raw) or UDP payload (udp, see useMixPayload). Nil for one size.
	mixLens []int
	// mixSlack is a second accepted length below mixLens (the raw
	// receiver's frame with its 802.1Q tag stripped); 0 for none.
	mixSlack int
	streams  []*streamState
	// deadlineNs is the Unix ns after which frames are late; MaxInt64
	// while traffic runs.
	deadlineNs atomic.Int64
	foreign    uint64 // signed frames of this run for a stream not received here
	// live is what the interval sampler reads while the trial runs; the
	// receiving loop publishes it after each batch. Nil when the trial has
	// no Spec.OnInterval: nothing is counted for it then.
	live *liveMeter
}

func newRxTrial(runID uint8, frameSize int, streams []*streamState) *rxTrial {
	t := &rxTrial{runID: runID, frameLen: frameSize - framing.FCSLen, streams: streams}
	if m, ok := framing.MixOf(frameSize); ok {
		pat := m.Pattern()
		t.mixLens = make([]int, len(pat))
		for i, f := range pat {
			t.mixLens[i] = f - framing.FCSLen
		}
		t.mixSlack = framing.VLANTagLen
		var sizes []int
		of := make([]int, len(pat))
		for i, f := range pat {
			k := slices.Index(sizes, f)
			if k < 0 {
				sizes = append(sizes, f)
				k = len(sizes) - 1
			}
			of[i] = k
		}
		for _, s := range streams {
			s.mixRx, s.mixPattern, s.mixSizeOf = make([]uint64, len(pat)), pat, of
			s.mixLat = make([]*latencyRecorder, len(sizes))
			for k := range s.mixLat {
				s.mixLat[k] = newLatencyRecorder()
			}
		}
	}
	t.deadlineNs.Store(math.MaxInt64)
	return t
}

// useMixPayload makes a mix trial's expected lengths UDP payload sizes (the
// udp receiver's unit) instead of frame lengths. It does nothing for a
// trial of one size.
func (t *rxTrial) useMixPayload(frameSize int, proto framing.Proto) {
	m, ok := framing.MixOf(frameSize)
	if !ok {
		return
	}
	for i, f := range m.Pattern() {
		t.mixLens[i] = framing.UDPPayloadSize(f, proto, false)
	}
	t.mixSlack = 0
}

func (t *rxTrial) lookup(id uint16) *streamState {
	for _, s := range t.streams {
		if s.spec.ID == id {
			return s
		}
	}
	return nil
}

// signatureOffset finds the UDP payload of an Ethernet frame truncated to
// the capture length: IPv4 (with options) or IPv6 (no extension headers),
// optionally behind one 802.1Q tag. ok is false for anything else.
func signatureOffset(f []byte) (off int, ok bool) {
	if len(f) < 14 {
		return 0, false
	}
	et := binary.BigEndian.Uint16(f[12:])
	off = 14
	if et == etherTypeVLAN {
		if len(f) < 18 {
			return 0, false
		}
		et = binary.BigEndian.Uint16(f[16:])
		off = 18
	}
	switch et {
	case etherTypeIPv4:
		if len(f) < off+20 || f[off]>>4 != 4 || f[off+9] != 17 {
			return 0, false
		}
		off += int(f[off]&0x0f)*4 + 8
	case etherTypeIPv6:
		if len(f) < off+40 || f[off]>>4 != 6 || f[off+6] != 17 {
			return 0, false
		}
		off += 40 + 8
	default:
		return 0, false
	}
	if off+framing.SignatureLen > len(f) {
		return 0, false
	}
	return off, true
}

// frame counts one received frame: data is its captured start, origLen its
// full length without FCS, tsNs its kernel receive time (Unix ns). It does
// not allocate.
func (t *rxTrial) frame(data []byte, origLen int, tsNs int64) {
	off, ok := signatureOffset(data)
	if !ok {
		return
	}
	if t.mixLens != nil {
		t.tally(data[off:], false, origLen, tsNs)
		return
	}
	t.count(data[off:], origLen == t.frameLen || origLen == t.frameLen-framing.VLANTagLen, tsNs)
}

// count counts one received UDP payload that may start with a signature:
// sizeOK says whether the frame (or datagram) had the trial's size, tsNs is
// its kernel receive time (Unix ns). The raw receiver calls it through
// frame, the UDP receiver with each datagram. It does not allocate.
func (t *rxTrial) count(payload []byte, sizeOK bool, tsNs int64) {
	t.tally(payload, sizeOK, -1, tsNs)
}

// countLen is count for a receiver that measured the length got (in
// mixLens' unit) rather than judged it: a mix trial checks it against the
// size the frame's sequence number has in the pattern; a trial of one size
// uses sizeOK.
func (t *rxTrial) countLen(payload []byte, sizeOK bool, got int, tsNs int64) {
	if t.mixLens == nil {
		got = -1
	}
	t.tally(payload, sizeOK, got, tsNs)
}

// tally is count; in a mix trial the length got replaces sizeOK: it must be
// the size of the frame's place in the pattern (got < 0: unknown, or
// truncated, is never right).
func (t *rxTrial) tally(payload []byte, sizeOK bool, got int, tsNs int64) {
	sig, err := framing.DecodeSignature(payload)
	if err != nil || sig.RunID != t.runID {
		return
	}
	s := t.lookup(sig.StreamID)
	if s == nil {
		t.foreign++
		return
	}
	if t.mixLens != nil {
		want := t.mixLens[sig.Seq%uint64(len(t.mixLens))]
		sizeOK = got >= 0 && (got == want || (t.mixSlack > 0 && got == want-t.mixSlack))
	}
	if !sizeOK {
		// A frame of the wrong size (RFC 2544 §10: check lengths) is
		// not a valid test frame; it counts as lost.
		s.badLen++
		return
	}
	if tsNs > t.deadlineNs.Load() {
		s.late++
		return
	}
	dup, reordered := s.win.mark(sig.Seq)
	if dup {
		s.duplicate++
		return
	}
	s.received++
	if s.mixRx != nil {
		s.mixRx[sig.Seq%uint64(len(s.mixRx))]++
	}
	if s.flowTop != nil {
		top := &s.flowTop[sig.Seq%uint64(len(s.flowTop))]
		reordered = sig.Seq < *top
		*top = max(*top, sig.Seq+1)
	}
	if reordered {
		s.reordered++
	}
	d := tsNs - sig.TxNs
	s.lat.record(sig.Seq, d)
	if s.mixLat != nil {
		s.mixLat[s.mixSizeOf[sig.Seq%uint64(len(s.mixSizeOf))]].record(sig.Seq, d)
	}
	if t.live != nil && !s.echo {
		t.live.pend.frame(d)
	}
	s.trend.record(sig.TxNs, d, sig.Seq)
	if sig.Seq == s.tagSeq.Load() {
		s.taggedNs = max(d, 0)
	}
}

// result renders a finished stream.
func (s *streamState) result(intended float64) StreamResult {
	r := StreamResult{
		ID:              s.spec.ID,
		Direction:       s.spec.Direction,
		IntendedFPS:     intended,
		Sent:            s.sent,
		Received:        min(s.received, s.sent),
		Reordered:       s.reordered,
		Duplicate:       s.duplicate,
		Late:            s.late,
		Latency:         s.lat.summary(),
		Trend:           s.trend.trend(),
		TaggedLatencyNs: s.taggedNs,
		LastLossNs:      -1,
		MaxLagNs:        int64(s.maxLag),

		CatchUpOverspeed:   s.peakOverspeed,
		CatchUpBurstFrames: s.burst,
	}
	r.Lost = r.Sent - r.Received
	r.Sizes = s.sizeCounts()
	if end := max(s.lastNs, s.drainNs); s.sent > 0 && end > s.firstNs {
		r.TxSeconds = float64(end-s.firstNs) / 1e9
		if s.sent > 1 {
			r.OfferedFPS = float64(s.sent-1) / r.TxSeconds
		}
	}
	if r.Lost > 0 {
		if m := s.win.highestMissing(s.queued); m >= 0 {
			r.LastLossNs = int64(s.sendOffset(uint64(m), r.TxSeconds))
		}
	}
	return r
}

// sizeCounts sums a mix stream's per-position counters by frame size (in
// the order the sizes first appear in the pattern); nil for one size.
func (s *streamState) sizeCounts() []SizeCount {
	if s.mixRx == nil || len(s.mixPattern) != len(s.mixRx) {
		return nil
	}
	var out []SizeCount
	p := uint64(len(s.mixPattern))
	for i, f := range s.mixPattern {
		k := slices.IndexFunc(out, func(c SizeCount) bool { return c.FrameSize == f })
		if k < 0 {
			out = append(out, SizeCount{FrameSize: f})
			k = len(out) - 1
		}
		// Frames 0..queued-1 were queued; position i holds those n ≡ i.
		if s.queued > uint64(i) {
			out[k].Sent += (s.queued-uint64(i)-1)/p + 1
		}
		out[k].Received += s.mixRx[i]
	}
	if len(s.mixLat) == len(out) {
		for k := range out {
			// Lean: no histogram, no CDF (a Results message through an
			// agent carries every size of every stream).
			if l := s.mixLat[k].stats(); l.Count > 0 {
				out[k].Latency = &l
			}
		}
	}
	return out
}

// sendOffset is the intended send time of frame n from the first frame, in
// ns; for an unpaced burst it is interpolated over the measured send time.
func (s *streamState) sendOffset(n uint64, txSeconds float64) float64 {
	if s.pacer.RateFPS > 0 {
		return float64(s.pacer.SendTime(n))
	}
	if s.queued <= 1 {
		return 0
	}
	return float64(n) / float64(s.queued-1) * txSeconds * 1e9
}
