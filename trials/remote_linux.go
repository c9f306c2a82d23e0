//go:build linux

package trials

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// Run runs one trial across the two hosts. When port B is lost during it,
// Run fails with an error wrapping Remote.Err.
func (e *RemoteEngine) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Spec: spec}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.id++
	id := e.id
	local, peer := e.cfg.Local.Addr, e.r.Addr().Unmap()
	if spec.IPv6 {
		local = e.cfg.Local.Addr6
	}
	if !local.IsValid() || peer.Is6() != spec.IPv6 {
		return res, fmt.Errorf("trial ipv6=%v: the agent is reached at %v; for this family connect to the agent's address of that family", spec.IPv6, peer)
	}
	half := udpHalfConfig{Namespace: e.cfg.Local.Namespace, SocketBuffer: e.cfg.SocketBuffer, Batch: e.cfg.Batch,
		TesterLimitTolerance: e.cfg.TesterLimitTolerance, MaxLag: e.cfg.MaxLag}
	ab, ba := streamsOf(spec, AtoB), streamsOf(spec, BtoA)
	ready, err := e.r.Setup(ctx, RemoteTrial{ID: id, Spec: spec, Port: e.cfg.Local.Port, RoundTrip: !e.cfg.OneWay && len(ab) > 0})
	if err != nil {
		return res, fmt.Errorf("agent trial setup: %w", err)
	}
	roundTrip := ready.Reflect && len(ab) > 0
	runID := ready.RunID

	var tx *udpSend
	var rx *udpReceive
	abort := func(err error) (Result, error) {
		if tx != nil {
			tx.Stop()
		}
		if rx != nil {
			rx.Stop(nil)
		}
		select {
		case <-e.r.Done():
		default:
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			e.r.Stop(sctx, id, nil)
			cancel()
		}
		return res, err
	}
	// The A->B sender (it sends after its learning wait, by which time
	// port B has started too), opened before the receiver so that the
	// receiver knows which frame it tags.
	sendCtx, cancelSend := context.WithCancel(ctx)
	defer cancelSend()
	if len(ab) > 0 {
		tx, err = startUDPSend(sendCtx, half, spec, runID, ab, udpSendOptions{
			Src: local, Dst: netip.AddrPortFrom(peer, ready.Port)})
		if err != nil {
			return abort(fmt.Errorf("local sender: %w", err))
		}
	}
	// The receiver for B->A streams and reflected frames.
	if len(ba) > 0 || roundTrip {
		opt := udpReceiveOptions{Listen: netip.AddrPortFrom(local, e.cfg.Local.Port), From: peer, Tx: tx}
		if roundTrip {
			opt.RoundTrip = ab
		}
		if rx, err = startUDPReceive(half, spec, runID, ba, opt); err != nil {
			return abort(fmt.Errorf("local receiver: %w", err))
		}
	}
	if err := e.r.Start(ctx, id); err != nil {
		return abort(fmt.Errorf("agent trial start: %w", err))
	}
	res.Start = time.Now()
	// spec.OnInterval from this host's halves; a failed trial ends
	// without a final interval.
	ivs := startHalfIntervals(spec, res.Start, tx, rx)
	defer ivs.Stop()
	length := ready.Length + udpMinLearning // learning floor of the UDP senders
	// Wait for the local sender and port B's planned end, then settle.
	timer := time.NewTimer(length)
	defer timer.Stop()
	var txDone <-chan struct{}
	if tx != nil {
		txDone = tx.Done()
	}
	for txDone != nil || timer.C != nil {
		select {
		case <-txDone:
			txDone = nil
		case <-timer.C:
			timer.C = nil
		case <-e.r.Done():
			return abort(fmt.Errorf("agent trial %d: %w", id, e.r.Err()))
		case <-ctx.Done():
			return abort(ctx.Err())
		}
	}
	select {
	case <-time.After(spec.Settle + LateGrace):
	case <-e.r.Done():
		return abort(fmt.Errorf("agent trial %d: %w", id, e.r.Err()))
	case <-ctx.Done():
		return abort(ctx.Err())
	}

	mine := Result{Spec: spec}
	sent := []StreamResult{}
	txByID := map[uint16]StreamResult{}
	if tx != nil {
		sr, err := tx.Stop()
		if err != nil {
			return abort(fmt.Errorf("local sender: %w", err))
		}
		for _, s := range sr.Streams {
			txByID[s.ID] = s
			sent = append(sent, StreamResult{ID: s.ID, Direction: s.Direction, Sent: s.Sent})
		}
		if sr.TesterLimitReason != "" {
			mine.TesterLimited, mine.TesterLimitReason = true, sr.TesterLimitReason
		}
	}
	remote, err := e.r.Stop(ctx, id, sent)
	if err != nil {
		tx = nil
		return abort(fmt.Errorf("agent trial stop: %w", err))
	}
	rxByID := map[uint16]StreamResult{}
	rttByID := map[uint16]StreamResult{}
	mine.Paths = Paths{Transport: "udp", TX: "sendmmsg", RX: "recvmmsg", Timestamps: "kernel-sw"}
	if rx != nil {
		counts := map[uint16]uint64{}
		for _, r := range remote.Streams {
			if r.Direction == BtoA {
				counts[r.ID] = r.Sent
			}
		}
		rr, err := rx.Stop(counts)
		if err != nil {
			return res, fmt.Errorf("local receiver: %w", err)
		}
		for _, s := range rr.Streams {
			rxByID[s.ID] = s
		}
		for _, s := range rr.RoundTrip {
			rttByID[s.ID] = s
		}
		mine.Paths.Timestamps = rr.Paths.Timestamps
		if rr.KernelDrops > 0 && len(ba) > 0 {
			mine.TesterLimited = true
			mine.TesterLimitReason = joinNonEmpty(mine.TesterLimitReason, fmt.Sprintf("controller: the receiving socket dropped %d datagrams in the kernel", rr.KernelDrops))
		}
	}
	for _, s := range spec.Streams {
		var r StreamResult
		if s.Direction == AtoB {
			r = txByID[s.ID]
			r.Latency, r.TaggedLatencyNs = LatencySummary{}, -1
			if rt, ok := rttByID[s.ID]; ok {
				r.Latency, r.TaggedLatencyNs = rt.Latency, rt.TaggedLatencyNs
			}
		} else {
			r = rxByID[s.ID]
		}
		r.ID, r.Direction = s.ID, s.Direction
		mine.Streams = append(mine.Streams, r)
	}
	if roundTrip {
		mine.Paths.Latency = "round-trip"
	} else if e.cfg.OneWay {
		mine.Paths.Latency = "one-way"
	}
	out, err := mergeRemote(e.cfg.OneWay, id, mine, remote)
	out.Start = res.Start
	if err != nil {
		return out, err
	}
	// Port B's generator lag of B->A streams, and the catch-up rule for
	// every stream, which needs the loss only port A knows.
	maxLag := e.cfg.MaxLag
	if maxLag <= 0 {
		maxLag = DefaultMaxLag
	}
	var reasons []string
	for i, s := range out.Streams {
		if s.Direction == BtoA {
			for _, r := range remote.Streams {
				if r.ID == s.ID {
					out.Streams[i].MaxLagNs = r.MaxLagNs
					out.Streams[i].CatchUpOverspeed = r.CatchUpOverspeed
					out.Streams[i].CatchUpBurstFrames = r.CatchUpBurstFrames
				}
			}
		}
		who := "controller: "
		if s.Direction == BtoA {
			who = "agent: "
		}
		if why := stallReason(out.Streams[i], maxLag); why != "" {
			reasons = append(reasons, who+why)
		}
	}
	if len(reasons) > 0 {
		// Transient only when the stalls are the trial's sole tester limits.
		out.TesterLimitTransient = !out.TesterLimited
		out.TesterLimited = true
	}
	for _, r := range reasons {
		out.TesterLimitReason = joinNonEmpty(out.TesterLimitReason, r)
	}
	ivs.Finish(out)
	return out, nil
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
