//go:build linux

package trials

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfc2544/rfc2544/framing"
)

// udpSend is one running send half: the streams of one port of a trial,
// sent to one destination, until they end, Stop, the deadline, or the
// context's end.
type udpSend struct {
	streams []*udpStreamTx
	spec    Spec
	cfg     RemotePort
	stop    atomic.Bool
	done    chan struct{}
	err     error
	once    sync.Once
	res     udpSendResult
}

// startUDPSend opens one connected send socket per flow of each stream in
// send, sends one learning datagram per flow, and starts sending the
// streams (after spec.Learning, at least 20 ms) to opt.Dst with run id
// runID. It returns at once.
func startUDPSend(ctx context.Context, cfg RemotePort, spec Spec, runID uint8, send []Stream, opt RemoteSend) (*udpSend, error) {
	cfg = cfg.withDefaults()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if !opt.Dst.IsValid() || opt.Dst.Port() == 0 {
		return nil, fmt.Errorf("udp send: destination %v: want an address and a port", opt.Dst)
	}
	if err := checkHalf(cfg.Namespace, spec, send, opt.Src, "udp send"); err != nil {
		return nil, err
	}
	rate := max(spec.RateFPS, rateChangeFPS(spec))
	if opt.MaxFPS > 0 && (rate == 0 || rate*float64(len(send)) > opt.MaxFPS*(1+1e-9)) {
		return nil, fmt.Errorf("udp send: %d streams at %.0f fps (0: as fast as possible) exceed the cap of %.0f fps", len(send), rate, opt.MaxFPS)
	}
	// The learning datagrams (one per flow) are paced at the cap too, and
	// must all be sent within the learning wait.
	wait := max(spec.Learning, udpMinLearning)
	learnGap := time.Duration(0)
	nLearn := 0
	for _, s := range send {
		nLearn += max(s.Flows, 1)
	}
	if opt.MaxFPS > 0 {
		learnGap = time.Duration(float64(time.Second) / opt.MaxFPS)
		if float64(nLearn-1)/opt.MaxFPS*float64(time.Second) >= float64(wait) {
			return nil, fmt.Errorf("udp send: %d learning datagrams at the cap of %.0f fps do not fit the %v learning wait", nLearn, opt.MaxFPS, wait)
		}
	}
	proto := framing.IPv4UDP
	if opt.Dst.Addr().Is6() {
		proto = framing.IPv6UDP
	}
	payloadLen := framing.UDPPayloadSize(spec.FrameSize, proto, false)
	u := &udpSend{spec: spec, cfg: cfg, done: make(chan struct{})}
	for _, s := range send {
		st := newStreamState(s)
		st.pacer = trialPacer(spec, cfg.Batch, false)
		stx := &udpStreamTx{st: st}
		u.streams = append(u.streams, stx)
		if err := openHalfFlows(stx, cfg, opt.Src, opt.Dst, payloadLen); err != nil {
			u.close()
			return nil, err
		}
	}
	stopCtx := context.AfterFunc(ctx, func() { u.stop.Store(true) })
	var deadline *time.Timer
	if !opt.Deadline.IsZero() {
		deadline = time.AfterFunc(time.Until(opt.Deadline), func() { u.stop.Store(true) })
	}
	go func() {
		defer close(u.done)
		defer stopCtx()
		if deadline != nil {
			defer deadline.Stop()
		}
		t0 := time.Now()
		i := 0
		for _, s := range u.streams {
			for _, fl := range s.flows {
				if u.stop.Load() {
					break
				}
				if d := time.Until(t0.Add(time.Duration(i) * learnGap)); d > 0 {
					time.Sleep(d)
				}
				_, _ = fl.conn.Write(fl.learn)
				i++
			}
		}
		for time.Since(t0) < wait && !u.stop.Load() {
			time.Sleep(min(5*time.Millisecond, wait-time.Since(t0)))
		}
		t := &udpTransmitter{streams: u.streams, runID: runID, stop: &u.stop, tagAfter: spec.TagAfter, cpu: -1, where: "udp sender", hardStop: hardStop(spec)}
		if !opt.Deadline.IsZero() {
			if d := time.Until(opt.Deadline); t.hardStop == 0 || d < t.hardStop {
				t.hardStop = max(d, time.Nanosecond)
			}
		}
		if !u.stop.Load() {
			release := reserveProcs(1)
			u.err = t.run()
			release()
		}
		u.close()
	}()
	return u, nil
}

func (u *udpSend) close() {
	for _, s := range u.streams {
		s.close()
	}
}

// Stop stops sending, if it has not stopped already, waits for the sender
// to finish (one batch at most) and returns the counters. It may be called
// more than once.
func (u *udpSend) Stop() (udpSendResult, error) {
	u.stop.Store(true)
	<-u.done
	u.once.Do(func() {
		var lim limits
		for _, s := range u.streams {
			st := s.st
			intended := intendedFPS(st, u.spec)
			r := st.result(intended)
			r.Received, r.Lost, r.LastLossNs = 0, 0, -1
			r.Latency, r.TaggedLatencyNs = LatencySummary{}, -1
			u.res.Streams = append(u.res.Streams, r)
			lim.add(generatorReasons(st, r, intended, u.cfg.TesterLimitTolerance, u.cfg.MaxLag, false))
		}
		if len(lim.reasons) > 0 {
			u.res.TesterLimitReason = joinReasons(lim.reasons)
			u.res.TesterLimitTransient = !lim.lasting
		}
		u.res.Paths = Paths{Transport: "udp", TX: "sendmmsg", TxSched: lastTxSched()}
	})
	return u.res, u.err
}

// openHalfFlows opens the send sockets of stx, one per flow, connected to
// dst only, and checks each is (getpeername): defence in depth, since the
// kernel sends a connected socket's datagrams only to its peer. The caller
// closes stx on error.
func openHalfFlows(stx *udpStreamTx, cfg RemotePort, src netip.Addr, dst netip.AddrPort, payloadLen int) error {
	id := stx.st.spec.ID
	for f := 0; f < max(stx.st.spec.Flows, 1); f++ {
		fl, err := openUDPFlow(cfg.Namespace, src, dst, cfg.SocketBuffer, payloadLen, cfg.Batch)
		if err != nil {
			return fmt.Errorf("udp send stream %d flow %d: %w", id, f, err)
		}
		stx.flows = append(stx.flows, fl)
		if p, ok := fl.conn.RemoteAddr().(interface{ AddrPort() netip.AddrPort }); !ok || p.AddrPort() != dst {
			return fmt.Errorf("udp send stream %d: socket connected to %v, not the allowed destination %v", id, fl.conn.RemoteAddr(), dst)
		}
	}
	return nil
}
