//go:build linux

package trials

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The halves of a TCP test, for a test whose two ends are on different
// hosts (the agent's TCP mode): each host runs its end on connections
// already made, the sender SendTCP, the receiver ReceiveTCP (or, for the
// idle path's RTT, ProbeRTT and EchoTCP).

// ListenTCP opens a listening socket at end (in its namespace) whose
// accepted connections have window bytes of TCP window (0: autotuning),
// as RunTCP's receiver.
func ListenTCP(end TCPEnd, window int) (*net.TCPListener, error) { return tcpListen(end, window) }

// DialTCP connects from end (its namespace and address) to dst with window
// bytes of TCP window (0: autotuning).
func DialTCP(ctx context.Context, end TCPEnd, dst netip.AddrPort, window int) (*net.TCPConn, error) {
	return tcpDial(ctx, end, dst, window)
}

// ClampTCPWindow clamps an accepted connection's advertised window to
// window bytes (0: leave it).
func ClampTCPWindow(c *net.TCPConn, window int) error { return clampWindow(c, window) }

// TCPSendConfig is the sender's half of a TCP test.
type TCPSendConfig struct {
	// Duration is how long the sender writes. Required.
	Duration time.Duration
	// SampleEvery is the TCP_INFO sample period; zero means 1 s.
	SampleEvery time.Duration
	// Budget, when positive, is the most payload bytes written over all
	// connections: writing stops when it is spent.
	Budget uint64
	// MaxPacingBps, when positive, caps the connections' summed payload
	// rate in bits/s: the writes are paced so that what was written by any
	// time t is at most MaxPacingBps × t plus one write.
	MaxPacingBps float64
	// Drain bounds the wait, after the last write, for the receiver to
	// read everything and close; zero means 30 s.
	Drain time.Duration
}

// TCPSendStats is what the sender's half measured.
type TCPSendStats struct {
	// Run has the sender's view: Streams, MSSBytes, the samples (their Bps
	// from the bytes the receiver acknowledged, TCP_INFO bytes_acked),
	// BytesSent, BytesRetrans and MeanRTTNs; Bytes is the payload
	// acknowledged and Seconds the time from the first write to the
	// receiver's close.
	Run TCPRun
	// Written is the payload written; Capped is set when Budget stopped
	// the writing before Duration, or MaxPacingBps held it back (the
	// writers waited for the pace more than 1 % of Duration): the rate is
	// the cap's, not the path's.
	Written uint64
	Capped  bool
}

// SendTCP writes on conns for cfg.Duration (or until cfg.Budget is spent),
// samples their TCP_INFO every cfg.SampleEvery, closes the write sides and
// waits for the receiver to close each connection (it has read every byte).
// It closes conns before returning.
func SendTCP(ctx context.Context, conns []*net.TCPConn, cfg TCPSendConfig) (TCPSendStats, error) {
	var st TCPSendStats
	st.Run.Streams = len(conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if len(conns) == 0 || cfg.Duration <= 0 {
		return st, errors.New("tcp send: no connections or no duration")
	}
	every := cfg.SampleEvery
	if every <= 0 {
		every = time.Second
	}
	drain := cfg.Drain
	if drain <= 0 {
		drain = 30 * time.Second
	}
	var written, paced atomic.Uint64 // bytes; the writers' summed waits, ns
	var capped atomic.Bool
	start := time.Now()
	end := start.Add(cfg.Duration)
	// ctx's end ends a write or read in progress too.
	stop := context.AfterFunc(ctx, func() {
		for _, c := range conns {
			c.SetDeadline(time.Now())
		}
	})
	defer stop()
	var swg sync.WaitGroup
	serrs := make([]error, len(conns))
	for i, c := range conns {
		c.SetWriteDeadline(end)
		swg.Go(func() {
			buf := make([]byte, 128<<10)
			for ctx.Err() == nil {
				n := uint64(len(buf))
				if cfg.Budget > 0 {
					// Reserve before writing: what is written never
					// exceeds the budget, whatever the goroutines' order.
					got := written.Add(n)
					if got > cfg.Budget {
						over := min(got-cfg.Budget, n)
						written.Add(-over)
						n -= over
						capped.Store(true)
						if n == 0 {
							return
						}
					}
				}
				if cfg.MaxPacingBps > 0 {
					// Pace the bytes written so far, this write's
					// included (reserved above, or counted below).
					at := written.Load()
					if cfg.Budget == 0 {
						at += n
					}
					due := end
					if s := float64(at) * 8 / cfg.MaxPacingBps; s < cfg.Duration.Seconds() {
						due = start.Add(time.Duration(s * float64(time.Second)))
					}
					if d := time.Until(due); d > 0 {
						paced.Add(uint64(d))
						select {
						case <-time.After(d):
						case <-ctx.Done():
						}
					}
					if ctx.Err() != nil || !time.Now().Before(end) {
						if cfg.Budget > 0 {
							written.Add(-n)
						}
						return
					}
				}
				k, err := c.Write(buf[:n])
				if cfg.Budget > 0 {
					written.Add(-(n - uint64(k)))
				} else {
					written.Add(uint64(k))
				}
				if err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						serrs[i] = err
					}
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { swg.Wait(); close(done) }()
	tick := time.NewTicker(every)
	var lastAcked, lastRetrans uint64
	lastAt := start
	var rttSum, rttN int64
	sample := func(now time.Time) {
		var s TCPSample
		var acked, retrans uint64
		var rtt, k int64
		for _, c := range conns {
			info, err := tcpInfo(c)
			if err != nil {
				continue
			}
			rtt += int64(info.Rtt) * 1000
			k++
			s.CwndBytes += int64(info.Snd_cwnd) * int64(info.Snd_mss)
			s.PeerWindowBytes += int64(info.Snd_wnd)
			retrans += info.Bytes_retrans
			acked += info.Bytes_acked
			st.Run.MSSBytes = int(info.Snd_mss)
		}
		if k > 0 {
			s.RTTNs = rtt / k
			rttSum += s.RTTNs
			rttN++
		}
		s.AtS = now.Sub(start).Seconds()
		if dt := now.Sub(lastAt).Seconds(); dt > 0 {
			s.Bps = float64(acked-min(lastAcked, acked)) * 8 / dt
		}
		s.RetransBytes = retrans - min(lastRetrans, retrans)
		lastAcked, lastRetrans, lastAt = acked, retrans, now
		st.Run.Samples = append(st.Run.Samples, s)
	}
loop:
	for {
		select {
		case now := <-tick.C:
			sample(now)
		case <-done:
			break loop
		}
	}
	tick.Stop()
	st.Written = written.Load()
	st.Capped = capped.Load() || time.Duration(paced.Load()/uint64(len(conns))) > cfg.Duration/100
	// The receiver closes each connection once it has read everything:
	// wait for that (EOF), then read the totals.
	var closed time.Time
	var rerr error
	for _, c := range conns {
		c.CloseWrite()
		c.SetReadDeadline(time.Now().Add(drain))
	}
	for _, c := range conns {
		if ctx.Err() != nil {
			break
		}
		var b [1]byte
		if _, err := c.Read(b[:]); !errors.Is(err, io.EOF) {
			if err == nil {
				err = errors.New("the receiver sent data")
			}
			rerr = fmt.Errorf("waiting for the receiver to read everything: %w", err)
			break
		}
		closed = time.Now()
	}
	for _, c := range conns {
		if info, err := tcpInfo(c); err == nil {
			st.Run.BytesSent += info.Bytes_sent
			st.Run.BytesRetrans += info.Bytes_retrans
			st.Run.Bytes += info.Bytes_acked
			if st.Run.MSSBytes == 0 {
				st.Run.MSSBytes = int(info.Snd_mss)
			}
		}
	}
	// bytes_acked counts the FIN too.
	st.Run.Bytes = min(st.Run.Bytes, st.Written)
	if rttN > 0 {
		st.Run.MeanRTTNs = rttSum / rttN
	}
	if !closed.IsZero() {
		st.Run.Seconds = closed.Sub(start).Seconds()
		st.Run.Bps = float64(st.Run.Bytes) * 8 / st.Run.Seconds
	}
	if err := errors.Join(append(serrs, rerr)...); err != nil {
		return st, fmt.Errorf("tcp send: %w", err)
	}
	return st, ctx.Err()
}

// TCPRecvStats is what the receiver's half counted.
type TCPRecvStats struct {
	// Bytes is the payload read; First and Last when its first and last
	// bytes were read.
	Bytes       uint64
	First, Last time.Time
	// Capped is set when the reading pace (maxBps) held the reading back
	// more than 1 % of the span: the rate is the cap's, not the path's.
	Capped bool
}

// Span is the time from the first byte read to the last.
func (s TCPRecvStats) Span() time.Duration {
	if s.First.IsZero() {
		return 0
	}
	return s.Last.Sub(s.First)
}

// ReceiveTCP reads every connection to its end (EOF) and closes it, until
// deadline or ctx's end (which close every connection and return an error).
// A positive maxBps paces the reading (payload bits/s over all
// connections): the receive windows fill and TCP's flow control holds the
// sender to it.
func ReceiveTCP(ctx context.Context, conns []*net.TCPConn, deadline time.Time, maxBps float64) (TCPRecvStats, error) {
	var st TCPRecvStats
	var total atomic.Uint64
	var first, last, paced atomic.Int64
	start := time.Now()
	stop := context.AfterFunc(ctx, func() {
		for _, c := range conns {
			c.SetReadDeadline(time.Now())
		}
	})
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		c.SetReadDeadline(deadline)
		wg.Go(func() {
			defer c.Close()
			buf := make([]byte, 128<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					now := time.Now().UnixNano()
					first.CompareAndSwap(0, now)
					last.Store(now)
					got := total.Add(uint64(n))
					if maxBps > 0 {
						// Behind the pace: wait until the bytes read are
						// within it.
						due := deadline
						if s := float64(got) * 8 / maxBps; s < time.Until(deadline).Seconds()+time.Since(start).Seconds() {
							due = start.Add(time.Duration(s * float64(time.Second)))
						}
						if d := time.Until(due); d > time.Millisecond {
							paced.Add(int64(d))
							select {
							case <-time.After(d):
							case <-ctx.Done():
							}
						}
					}
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						errs[i] = err
					}
					return
				}
			}
		})
	}
	wg.Wait()
	st.Bytes = total.Load()
	if f := first.Load(); f > 0 {
		st.First, st.Last = time.Unix(0, f), time.Unix(0, last.Load())
	}
	st.Capped = len(conns) > 0 && time.Duration(paced.Load()/int64(len(conns))) > st.Span()/100
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		return st, fmt.Errorf("tcp receive: %w", err)
	}
	return st, nil
}

// EchoTCP answers ProbeRTT on c: it writes back each byte it reads, at most
// limit bytes, until the prober closes, then closes c. It returns the bytes
// echoed.
func EchoTCP(c *net.TCPConn, limit int) (uint64, error) {
	defer c.Close()
	c.SetNoDelay(true)
	b := make([]byte, 1)
	var n uint64
	for n < uint64(limit) {
		if _, err := io.ReadFull(c, b); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		if _, err := c.Write(b); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ProbeRTT measures the idle path's RTT with n one-byte exchanges on c
// (Nagle off) against EchoTCP at the other end, and reads c's path MTU and
// MSS. It does not close c.
func ProbeRTT(ctx context.Context, c *net.TCPConn, n int) (RTTProbe, error) {
	var p RTTProbe
	n = max(n, 1)
	c.SetNoDelay(true)
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	b := make([]byte, 1)
	var sum int64
	p.MinNs = -1
	for i := range n {
		t0 := time.Now()
		b[0] = byte(i)
		if _, err := c.Write(b); err != nil {
			return p, fmt.Errorf("rtt probe: %w", err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return p, fmt.Errorf("rtt probe: %w", err)
		}
		d := int64(time.Since(t0))
		sum += d
		if p.MinNs < 0 || d < p.MinNs {
			p.MinNs = d
		}
		p.Count++
		if ctx.Err() != nil {
			break
		}
	}
	p.MeanNs = sum / int64(p.Count)
	if rc, err := c.SyscallConn(); err == nil {
		is4 := true
		if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
			is4 = a.AddrPort().Addr().Unmap().Is4()
		}
		rc.Control(func(fd uintptr) {
			p.MSSBytes, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
			if is4 {
				p.PathMTU, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU)
			} else {
				p.PathMTU, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU)
			}
		})
	}
	return p, ctx.Err()
}
