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
	"syscall"
	"time"

	"github.com/rfc2544/rfc2544/internal/nsutil"
	"golang.org/x/sys/unix"
)

// tcpListen opens the receiver's listening socket in its namespace; a
// positive window sets SO_RCVBUF before listen so accepted connections
// inherit it (and the window scale it needs).
func tcpListen(end TCPEnd, window int) (*net.TCPListener, error) {
	var ln *net.TCPListener
	err := nsutil.Do(end.Namespace, func() error {
		lc := net.ListenConfig{Control: bufControl(window)}
		l, err := lc.Listen(context.Background(), "tcp", netip.AddrPortFrom(end.Addr, end.Port).String())
		if err != nil {
			return err
		}
		ln = l.(*net.TCPListener)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tcp listen on %v: %w", end.Addr, err)
	}
	return ln, nil
}

// tcpDial connects from the sender's namespace and address to dst.
func tcpDial(ctx context.Context, end TCPEnd, dst netip.AddrPort, window int) (*net.TCPConn, error) {
	var c *net.TCPConn
	err := nsutil.Do(end.Namespace, func() error {
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(end.Addr, 0)), Control: bufControl(window), Timeout: 5 * time.Second}
		conn, err := d.DialContext(ctx, "tcp", dst.String())
		if err != nil {
			return err
		}
		c = conn.(*net.TCPConn)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tcp connect from %v to %v: %w", end.Addr, dst, err)
	}
	return c, nil
}

// bufControl makes window bytes the socket's TCP window: the advertised
// receive window is clamped to it (TCP_WINDOW_CLAMP, which accepted
// connections inherit from the listener), and the send and receive buffers
// are twice that (the *FORCE variants first, so a root tester is not
// capped by the sysctl maxima), since the kernel spends part of a buffer
// on overhead. Window 0 leaves autotuning.
func bufControl(window int) func(string, string, syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		if window <= 0 {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			if serr = setBuf(int(fd), unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, 2*window); serr != nil {
				return
			}
			if serr = setBuf(int(fd), unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, 2*window); serr != nil {
				return
			}
			if serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_WINDOW_CLAMP, window); serr != nil {
				serr = fmt.Errorf("TCP_WINDOW_CLAMP %d: %w", window, serr)
			}
		})
		return errors.Join(err, serr)
	}
}

// clampWindow clamps an accepted connection's advertised window to window
// bytes (0: leave it): a listener's clamp does not reach the connections it
// accepts on every kernel.
func clampWindow(c *net.TCPConn, window int) error {
	if window <= 0 {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_WINDOW_CLAMP, window)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("TCP_WINDOW_CLAMP %d: %w", window, serr)
	}
	return nil
}

// tcpInfo reads TCP_INFO of c.
func tcpInfo(c *net.TCPConn) (*unix.TCPInfo, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) { info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return nil, err
	}
	return info, serr
}

// MeasureRTT measures the idle path's round-trip time with n one-byte
// exchanges on one connection (Nagle off), and reads the connection's path
// MTU and MSS.
func MeasureRTT(ctx context.Context, cfg TCPConfig, n int) (RTTProbe, error) {
	var p RTTProbe
	c := cfg
	c.Duration = max(c.Duration, time.Second)
	if err := c.Validate(); err != nil {
		return p, err
	}
	n = max(n, 1)
	ln, err := tcpListen(cfg.Receiver, 0)
	if err != nil {
		return p, err
	}
	defer ln.Close()
	echo := make(chan error, 1)
	go func() {
		s, err := ln.AcceptTCP()
		if err == nil {
			_, err = EchoTCP(s, n)
		}
		echo <- err
	}()
	conn, err := tcpDial(ctx, cfg.Sender, netip.MustParseAddrPort(ln.Addr().String()), 0)
	if err != nil {
		return p, err
	}
	p, err = ProbeRTT(ctx, conn, n)
	conn.Close()
	if eerr := <-echo; err == nil && eerr != nil {
		err = fmt.Errorf("rtt probe echo: %w", eerr)
	}
	return p, err
}

// RunTCP runs one TCP throughput test (RFC 6349 §3.3): Streams connections
// from the sender to the receiver, each writing for Duration, TCP_INFO
// sampled every SampleEvery. Throughput is the payload received over the
// time from the first write to the last byte received.
func RunTCP(ctx context.Context, cfg TCPConfig) (TCPRun, error) {
	run := TCPRun{Streams: max(cfg.Streams, 1), WindowBytes: cfg.WindowBytes}
	if err := cfg.Validate(); err != nil {
		return run, err
	}
	every := cfg.SampleEvery
	if every <= 0 {
		every = time.Second
	}
	ln, err := tcpListen(cfg.Receiver, cfg.WindowBytes)
	if err != nil {
		return run, err
	}
	defer ln.Close()
	dst := netip.MustParseAddrPort(ln.Addr().String())

	// Receivers: count bytes; record the last arrival.
	var received atomic.Uint64
	var lastNs atomic.Int64
	var rwg sync.WaitGroup
	rerrs := make([]error, run.Streams)
	for i := range run.Streams {
		rwg.Go(func() {
			s, err := ln.AcceptTCP()
			if err != nil {
				rerrs[i] = err
				return
			}
			defer s.Close()
			if err := clampWindow(s, cfg.WindowBytes); err != nil {
				rerrs[i] = err
				return
			}
			buf := make([]byte, 256<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					received.Add(uint64(n))
					lastNs.Store(time.Now().UnixNano())
				}
				if err != nil {
					if !errors.Is(err, io.EOF) {
						rerrs[i] = err
					}
					return
				}
			}
		})
	}
	conns := make([]*net.TCPConn, 0, run.Streams)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range run.Streams {
		c, err := tcpDial(ctx, cfg.Sender, dst, cfg.WindowBytes)
		if err != nil {
			ln.Close()
			return run, err
		}
		conns = append(conns, c)
	}

	// Senders: write until the deadline, then close the write side.
	start := time.Now()
	end := start.Add(cfg.Duration)
	var swg sync.WaitGroup
	serrs := make([]error, len(conns))
	for i, c := range conns {
		c.SetWriteDeadline(end)
		swg.Go(func() {
			buf := make([]byte, 128<<10)
			for {
				if _, err := c.Write(buf); err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						serrs[i] = err
					}
					break
				}
				if ctx.Err() != nil {
					break
				}
			}
		})
	}

	// Samples, until the senders stop.
	done := make(chan struct{})
	go func() { swg.Wait(); close(done) }()
	tick := time.NewTicker(every)
	var lastBytes, lastRetrans uint64
	lastAt := start
	var rttSum, rttN int64
	sample := func(now time.Time) {
		var s TCPSample
		var retrans uint64
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
			run.MSSBytes = int(info.Snd_mss)
		}
		if k > 0 {
			s.RTTNs = rtt / k
			rttSum += s.RTTNs
			rttN++
		}
		got := received.Load()
		s.AtS = now.Sub(start).Seconds()
		if dt := now.Sub(lastAt).Seconds(); dt > 0 {
			s.Bps = float64(got-lastBytes) * 8 / dt
		}
		s.RetransBytes = retrans - min(lastRetrans, retrans)
		lastBytes, lastRetrans, lastAt = got, retrans, now
		run.Samples = append(run.Samples, s)
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
	for _, c := range conns {
		c.CloseWrite()
	}
	waited := make(chan struct{})
	go func() { rwg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(cfg.Duration + 30*time.Second):
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
		<-waited
		return run, errors.New("tcp: the receiver did not get the end of the data within 30 s of the last write")
	}
	// Totals from TCP_INFO once the receivers have every byte (the
	// senders' buffers drained), before the connections close.
	for _, c := range conns {
		if info, err := tcpInfo(c); err == nil {
			run.BytesSent += info.Bytes_sent
			run.BytesRetrans += info.Bytes_retrans
			if run.MSSBytes == 0 {
				run.MSSBytes = int(info.Snd_mss)
			}
		}
	}
	if rttN > 0 {
		run.MeanRTTNs = rttSum / rttN
	}
	run.Bytes = received.Load()
	if l := lastNs.Load(); l > 0 {
		run.Seconds = float64(l-start.UnixNano()) / 1e9
	}
	if run.Seconds > 0 {
		run.Bps = float64(run.Bytes) * 8 / run.Seconds
	}
	if err := errors.Join(append(serrs, rerrs...)...); err != nil {
		return run, fmt.Errorf("tcp: %w", err)
	}
	return run, ctx.Err()
}
