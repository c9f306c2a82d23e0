package trials

import "time"

// Result is what one trial measured. Loss is computed from frames actually
// handed to the kernel (offered load), never from the intended count
// (RFC 2285 §3.5).
type Result struct {
	// Spec is the trial that was run.
	Spec Spec `json:"spec"`
	// Start is when traffic began.
	Start time.Time `json:"start"`
	// Streams holds one result per Spec stream, in Spec order.
	Streams []StreamResult `json:"streams"`
	// TesterLimited is set when the tester, not the DUT, limited the trial:
	// the generator fell short of the intended load, or the receiver dropped
	// frames in the kernel. Such a trial is neither a pass nor a fail.
	TesterLimited bool `json:"tester_limited,omitempty"`
	// TesterLimitReason says why, for the report.
	TesterLimitReason string `json:"tester_limit_reason,omitempty"`
	// TesterLimitTransient is set when every tester limit of the trial was
	// a stall of the tester's own host (the generator was not scheduled in
	// time and caught up with a burst that could explain the loss) rather
	// than a ceiling the tester keeps hitting: the same trial run again may
	// well be valid. The rfc2544 runner repeats such trials (trial.retries).
	TesterLimitTransient bool `json:"tester_limit_transient,omitempty"`
	// LossExplained is set when frames were lost and every stream that
	// lost any fell behind its schedule by more than Config.MaxLag and
	// caught up with a burst that could hold every frame it lost, and the
	// DUT was not seen forwarding below the offered rate (Overloaded):
	// the loss may be the tester's own even when another limit of the
	// trial is lasting, so it is not the DUT's.
	LossExplained bool `json:"loss_explained,omitempty"`
	// FlowControlled is set when the generator fell short because the path
	// held it back (back-pressure: the kernel refused frames or held the
	// transmit ring while the sender had time to spare), not because the
	// tester could not go faster. It is not TesterLimited: the offered load
	// is what the DUT accepted, and if it lost nothing the DUT carried
	// that rate (see HeldBack).
	FlowControlled bool `json:"flow_controlled,omitempty"`
	// FlowControlReason says so, for the report: "flow-controlled: the DUT
	// held the tester back at N fps (what was seen)".
	FlowControlReason string `json:"flow_control_reason,omitempty"`
	// OverloadReason is set when the generator fell short of the intended
	// load and nothing showed the path held it back, yet the trial is not
	// tester-limited: the DUT lost frames and could not forward even the
	// load offered (Overloaded), so the loss is its own at that load
	// (sending less never adds loss), and the shortfall is recorded here.
	OverloadReason string `json:"overload_reason,omitempty"`
	// TxPressure is what each sending port measured about how the kernel
	// took its frames (raw engine only).
	TxPressure []TxPressure `json:"tx_pressure,omitempty"`
	// Paths records which kernel paths the engine used.
	Paths Paths `json:"paths"`
}

// Paths records the kernel facilities a trial ran on, so a report can say
// how frames were sent, received and timed.
type Paths struct {
	// Transport is "raw", "udp", "xdp" or "sim".
	Transport string `json:"transport"`
	// TX is the transmit path, e.g. "tx_ring", "sendmmsg", "sendto".
	TX string `json:"tx,omitempty"`
	// TxSched is how the sending threads were scheduled: "nice -10" (a
	// larger CPU share, as root), or "" (as the process was: no privilege).
	TxSched string `json:"tx_sched,omitempty"`
	// QdiscBypass is set when PACKET_QDISC_BYPASS was in force.
	QdiscBypass bool `json:"qdisc_bypass,omitempty"`
	// RX is the receive path, e.g. "rx_ring", "recvmmsg".
	RX string `json:"rx,omitempty"`
	// XDP is the AF_XDP path of the xdp transport: XDP hook (native or
	// generic), zero-copy or copy, need-wakeup, e.g. "native, copy,
	// need-wakeup".
	XDP string `json:"xdp,omitempty"`
	// Timestamps is the receive timestamp source, e.g. "kernel-sw",
	// "hardware", "kernel-xdp-meta" or "kernel-xdp-head" (the kernel's
	// clock read by the XDP program, in metadata or in front of the
	// frame), "user" (a clock read after receive), "sim".
	Timestamps string `json:"timestamps,omitempty"`
	// Fallback says what the kernel refused and which path ran instead,
	// e.g. "the verifier refused the metadata stamp: …"; empty when every
	// path is the first choice.
	Fallback string `json:"fallback,omitempty"`
	// Latency is how latency crossed hosts in a two-host trial (package
	// trials/agent): "round-trip" (frames reflected by the far host and
	// timed by the sender's clock: round-trip times) or "one-way"
	// (clocks declared synchronized). Empty for single-host trials, whose
	// latency is one way on one clock.
	Latency string `json:"latency,omitempty"`
}

// StreamResult is the count and timing of one stream.
type StreamResult struct {
	// ID and Direction repeat the stream's Spec.
	ID        uint16    `json:"id"`
	Direction Direction `json:"direction"`
	// IntendedFPS is the load the tester tried to send.
	IntendedFPS float64 `json:"intended_fps"`
	// OfferedFPS is the load actually handed to the kernel, measured over
	// TxSeconds.
	OfferedFPS float64 `json:"offered_fps"`
	// TxSeconds is the time from the first to the last frame sent.
	TxSeconds float64 `json:"tx_s"`
	// Sent counts frames handed to the kernel successfully.
	Sent uint64 `json:"sent"`
	// Received counts distinct test frames of this stream received in time
	// (duplicates and late frames excluded).
	Received uint64 `json:"received"`
	// Lost is Sent minus Received: frames never seen, or seen too late.
	Lost uint64 `json:"lost"`
	// Reordered counts frames that arrived with a sequence number lower than
	// one already received on the same flow.
	Reordered uint64 `json:"reordered"`
	// Duplicate counts extra copies of frames already received.
	Duplicate uint64 `json:"duplicate"`
	// Late counts frames received after the settle wait ended; they are
	// included in Lost.
	Late uint64 `json:"late"`
	// KernelDrops counts frames the receiving socket dropped in the kernel
	// (PACKET_STATISTICS, SO_RXQ_OVFL). Non-zero makes the trial
	// tester-limited.
	KernelDrops uint64 `json:"kernel_drops,omitempty"`
	// MaxLagNs is how far, at worst, the generator fell behind its
	// schedule (e.g. its thread was descheduled): the frames due in that
	// time went out back to back when it caught up, a burst the intended
	// load did not have. Beyond Config.MaxLag, a trial whose loss that
	// burst could explain is tester-limited. Zero for unpaced bursts.
	MaxLagNs int64 `json:"max_lag_ns,omitempty"`
	// CatchUpOverspeed is the fastest the generator went to catch up after
	// falling behind, as a fraction above IntendedFPS (0.05: 5 % faster),
	// spread over the rest of the trial (trials.Pacer); zero when it never
	// fell behind by more than Pacer.CatchUpAfter. The trial's average
	// (OfferedFPS) is unchanged.
	CatchUpOverspeed float64 `json:"catch_up_overspeed,omitempty"`
	// CatchUpBurstFrames counts frames of a backlog the spread could not
	// absorb by the end of the schedule: they went out back to back with
	// the last one.
	CatchUpBurstFrames uint64 `json:"catch_up_burst_frames,omitempty"`
	// Latency summarizes every received frame's latency.
	Latency LatencySummary `json:"latency"`
	// TaggedLatencyNs is the latency of the tagged frame (Spec.TagAfter),
	// or -1 when no tagged frame was requested or it was lost.
	TaggedLatencyNs int64 `json:"tagged_latency_ns"`
	// LastLossNs is the offset from the first frame sent to the transmit time
	// of the last lost frame, or -1 when nothing was lost. System recovery
	// (RFC 2544 §26.5) uses it.
	LastLossNs int64 `json:"last_loss_ns"`
	// Trend is the latency against send time through the trial and its
	// fit (see Result.Sustained); nil when too few frames were timed or
	// the tester keeps no series.
	Trend *LatencyTrend `json:"latency_trend,omitempty"`
	// Sizes are, for a frame-size mix (framing.MixOf), the frames sent and
	// received of each of its sizes, so loss can be attributed to a size;
	// nil for a stream of one size.
	Sizes []SizeCount `json:"sizes,omitempty"`
}

// SizeCount is one frame size of a mix stream's counters.
type SizeCount struct {
	// FrameSize is the size in bytes, FCS included.
	FrameSize int `json:"frame_size"`
	// Sent counts the frames of this size handed to the transmit path (by
	// their place in the pattern; a frame the kernel refused, which makes
	// the trial tester-limited, is still counted here).
	Sent uint64 `json:"sent"`
	// Received counts the distinct frames of this size received in time.
	Received uint64 `json:"received"`
	// Latency summarizes this size's received frames' latency, without
	// histogram or CDF (HDR and Buckets empty: percentiles merged across
	// trials are an upper bound); nil when none was timed here (and from
	// an agent, which does not send it).
	Latency *LatencySummary `json:"latency,omitempty"`
}

// LossPercent is the frame loss rate of RFC 2544 §26.3:
// (sent − received) × 100 / sent. A stream that sent nothing reports 100:
// a trial in which nothing was offered proves nothing.
func (s StreamResult) LossPercent() float64 {
	if s.Sent == 0 {
		return 100
	}
	return float64(s.Lost) * 100 / float64(s.Sent)
}

// Totals adds up the streams of a trial: counts and rates are summed; latency
// takes the min of minimums, the max of maximums and the count-weighted mean,
// and the percentiles of the stream that timed the most frames.
func (r Result) Totals() StreamResult {
	t := StreamResult{TaggedLatencyNs: -1, LastLossNs: -1}
	var sum float64
	var lat LatencySummary
	for _, s := range r.Streams {
		t.IntendedFPS += s.IntendedFPS
		t.OfferedFPS += s.OfferedFPS
		t.TxSeconds = max(t.TxSeconds, s.TxSeconds)
		t.Sent += s.Sent
		t.Received += s.Received
		t.Lost += s.Lost
		t.Reordered += s.Reordered
		t.Duplicate += s.Duplicate
		t.Late += s.Late
		t.KernelDrops += s.KernelDrops
		t.TaggedLatencyNs = max(t.TaggedLatencyNs, s.TaggedLatencyNs)
		t.LastLossNs = max(t.LastLossNs, s.LastLossNs)
		l := s.Latency
		if l.Count == 0 {
			continue
		}
		if l.Count > lat.Count {
			lat = l
		}
		if t.Latency.Count == 0 || l.MinNs < t.Latency.MinNs {
			t.Latency.MinNs = l.MinNs
		}
		t.Latency.MaxNs = max(t.Latency.MaxNs, l.MaxNs)
		t.Latency.Count += l.Count
		sum += l.MeanNs * float64(l.Count)
	}
	if t.Latency.Count > 0 {
		lat.MinNs, lat.MaxNs, lat.Count = t.Latency.MinNs, t.Latency.MaxNs, t.Latency.Count
		lat.MeanNs = sum / float64(t.Latency.Count)
		t.Latency = lat
	}
	return t
}

// LossPercent is the frame loss rate over all streams.
func (r Result) LossPercent() float64 { return r.Totals().LossPercent() }

// Passed reports whether every stream's loss is within tolerancePercent.
// A tester-limited trial never passes (nor fails: see TesterLimited).
func (r Result) Passed(tolerancePercent float64) bool {
	if r.TesterLimited || len(r.Streams) == 0 {
		return false
	}
	for _, s := range r.Streams {
		if s.Sent == 0 || s.LossPercent() > tolerancePercent {
			return false
		}
	}
	return true
}

// ReceivedFPS is the rate at which the stream's frames got through, in frames
// per second: OfferedFPS × Received / Sent. Through a DUT that forwards less
// than it is offered it is the DUT's forwarding rate for this stream; zero
// when nothing was sent.
func (s StreamResult) ReceivedFPS() float64 {
	if s.Sent == 0 {
		return 0
	}
	return s.OfferedFPS * float64(s.Received) / float64(s.Sent)
}

// Direction sums the streams of one direction (as Totals does for all), so
// a bidirectional trial (RFC 2544 §14) reports each direction's own
// offered and received rates; ok is false when no stream goes that way.
func (r Result) Direction(d Direction) (s StreamResult, ok bool) {
	sub := Result{}
	for _, st := range r.Streams {
		if st.Direction == d {
			sub.Streams = append(sub.Streams, st)
		}
	}
	if len(sub.Streams) == 0 {
		return StreamResult{}, false
	}
	s = sub.Totals()
	s.Direction = d
	if len(sub.Streams) == 1 {
		s.ID = sub.Streams[0].ID
	}
	return s, true
}
