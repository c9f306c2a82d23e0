package lab_test

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"golang.org/x/sys/unix"
)

// arrival is one datagram seen by a sink.
type arrival struct {
	seq   uint64
	bytes int // UDP payload
	at    time.Time
}

// sink collects datagrams on a UDP socket until stopped.
type sink struct {
	c        *net.UDPConn
	mu       sync.Mutex
	arrivals []arrival
	done     chan struct{}
}

func newSink(t *testing.T, ns string, addr netip.Addr) *sink {
	t.Helper()
	s := &sink{c: udpIn(t, ns, netip.AddrPortFrom(addr, 0)), done: make(chan struct{})}
	rc, _ := s.c.SyscallConn()
	rc.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, 32<<20)
		// Kernel receive timestamps: the reader may lag behind arrivals.
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	})
	s.awaitStamps(t)
	go func() {
		defer close(s.done)
		buf := make([]byte, 65536)
		oob := make([]byte, 128)
		for {
			n, oobn, _, _, err := s.c.ReadMsgUDPAddrPort(buf, oob)
			if err != nil {
				return
			}
			at, ok := kernelStamp(oob[:oobn])
			if !ok {
				at = time.Now()
			}
			if n >= 8 {
				s.mu.Lock()
				s.arrivals = append(s.arrivals, arrival{seq: binary.BigEndian.Uint64(buf), bytes: n, at: at})
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// awaitStamps waits until the kernel stamps datagrams as they arrive. The
// first socket asking for stamps turns them on in a work item that runs
// later; until it has, a datagram is stamped when it is read (a reader
// behind stamps a whole queue in a bunch: 439.82 Mbit/s read for 200 once
// under stress-ng --cpu 1, 2026-12-02). The sink sends itself a datagram
// and reads it 2 ms later until its stamp is its arrival's, for up to 2 s.
func (s *sink) awaitStamps(t *testing.T) {
	t.Helper()
	buf, oob := make([]byte, 64), make([]byte, 128)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		sent := time.Now()
		if _, err := s.c.WriteToUDPAddrPort([]byte("stamp?"), s.addr()); err != nil {
			t.Fatalf("sink: send itself a probe: %v", err)
		}
		time.Sleep(2 * time.Millisecond)
		s.c.SetReadDeadline(time.Now().Add(time.Second))
		_, oobn, _, _, err := s.c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			t.Fatalf("sink: read its probe: %v", err)
		}
		if at, ok := kernelStamp(oob[:oobn]); ok && at.Sub(sent) < time.Millisecond {
			s.c.SetReadDeadline(time.Time{})
			return
		}
	}
	t.Fatal("sink: the kernel did not stamp datagrams on arrival within 2 s")
}

// kernelStamp is the SO_TIMESTAMPNS stamp in a datagram's control
// messages.
func kernelStamp(oob []byte) (time.Time, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			return time.Unix(int64(binary.NativeEndian.Uint64(m.Data)), int64(binary.NativeEndian.Uint64(m.Data[8:]))), true
		}
	}
	return time.Time{}, false
}

func (s *sink) addr() netip.AddrPort { return s.c.LocalAddr().(*net.UDPAddr).AddrPort() }

// stop waits until nothing arrived for quiet, then closes the socket and
// returns the arrivals.
func (s *sink) stop(quiet time.Duration) []arrival {
	last := -1
	for {
		time.Sleep(quiet)
		s.mu.Lock()
		n := len(s.arrivals)
		s.mu.Unlock()
		if n == last {
			break
		}
		last = n
	}
	s.c.Close()
	<-s.done
	return s.arrivals
}

// source sends sequence-numbered datagrams from a port.
type source struct {
	c *net.UDPConn
	// avoid are CPUs the sending thread must not run on (the DUT's).
	avoid []int
}

func newSource(t *testing.T, ns string, addr netip.Addr) *source {
	s := &source{c: udpIn(t, ns, netip.AddrPortFrom(addr, 0))}
	// A veth does not orphan a frame: it stays charged to the sending
	// socket until the DUT has forwarded it. With the default send
	// buffer (~200 KB, ~270 small frames) the socket blocks long before
	// the DUT's 1000-frame backlog fills, which is back-pressure, not
	// loss. A tester needs a send buffer larger than the DUT's backlog.
	rc, _ := s.c.SyscallConn()
	rc.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, 64<<20)
	})
	return s
}

// send sends n datagrams of size bytes to dst at pps per second (0: as
// fast as possible) and returns how many were sent and how long it took.
func (s *source) send(t *testing.T, dst netip.AddrPort, n, size int, pps float64) (int, time.Duration) {
	t.Helper()
	if len(s.avoid) > 0 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set, old unix.CPUSet
		unix.SchedGetaffinity(0, &old)
		set = old
		for _, c := range s.avoid {
			set.Clear(c)
		}
		if set.Count() > 0 {
			unix.SchedSetaffinity(0, &set)
			defer unix.SchedSetaffinity(0, &old)
		}
	}
	buf := make([]byte, size)
	start := time.Now()
	sent := 0
	for i := 0; i < n; i++ {
		if pps > 0 {
			due := start.Add(time.Duration(float64(i) / pps * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		binary.BigEndian.PutUint64(buf, uint64(i))
		if _, err := s.c.WriteToUDPAddrPort(buf, dst); err != nil {
			if errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.EAGAIN) {
				continue
			}
			t.Fatalf("send: %v", err)
		}
		sent++
	}
	return sent, time.Since(start)
}

// warm resolves ARP/ND along the path with a few datagrams.
func warm(t *testing.T, st *lab.State, v6 bool) {
	t.Helper()
	if !deliver(t, st, v6, 8, 300*time.Millisecond) {
		t.Fatalf("lab %s: path A→B does not work", st.Name)
	}
}

var _ = os.Getpid
