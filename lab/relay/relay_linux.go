package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/rfc2544/rfc2544/internal/afpacket"
	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// Relay sizing.
const (
	relayQueueBytes = 16 << 20 // per direction
	relayMinSlots   = 512
	relayMaxSlots   = 8192
	relayRcvBuf     = 8 << 20
	calibFrames     = 50000
	relayReadyWait  = 10 * time.Second
	// relayFineWait is how close to a frame's due time the sender stops
	// trusting Go timers; relayStep is its nanosleep step then.
	relayFineWait = 2 * time.Millisecond
	relayStep     = 200 * time.Microsecond
)

// Start starts the relay of lab name as a copy of the running program
// (which must call Enter) with spec, its output written to logPath and
// its PID to pidPath as soon as it runs, and waits until it forwards (not
// yet live: the Settings apply after the command "live"). It returns the
// process's PID and start time (see End), also with an error once the
// process runs.
func Start(name string, spec Spec, logPath, pidPath string) (pid int, start uint64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, 0, fmt.Errorf("start relay: find own executable: %w", err)
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return 0, 0, fmt.Errorf("start relay: %w", err)
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("start relay: log file: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, 0, fmt.Errorf("start relay: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(exe, "lab", "relay", "--name", name)
	cmd.Env = append(os.Environ(), envName+"="+name, envSpec+"="+string(specJSON))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw} // fd 3: readiness
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return 0, 0, fmt.Errorf("start relay %s: %w", exe, err)
	}
	pw.Close()
	pid = cmd.Process.Pid
	go cmd.Wait() // reap it if it exits while we run
	start, _ = procStartTime(pid)
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return pid, start, fmt.Errorf("write relay pid file: %w", err)
	}
	pr.SetReadDeadline(time.Now().Add(relayReadyWait))
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		// A program that never called Enter runs as itself: end it.
		endProcess(pid)
		logb, _ := os.ReadFile(logPath)
		return pid, start, fmt.Errorf("relay did not start (%v; does the program call relay.Enter first in main, or TestMain?); its log: %s", err, strings.TrimSpace(string(logb)))
	}
	if line = strings.TrimSpace(line); line != "ok" {
		return pid, start, fmt.Errorf("relay failed: %s", line)
	}
	return pid, start, nil
}

// Calibrate measures the relay's forwarding ceiling before it goes live:
// it sends calibFrames 64-byte frames from the tester port ifname in
// namespace ns (MAC src, address sip) to the DUT port's MAC dst as fast as
// it can, and divides what the relay forwarded by the time from its first
// receive to its last send. The frames go to 198.19.1.99, which port B
// (not forwarding) drops silently. saturated: the relay forwarded fewer
// frames than were sent.
func Calibrate(ctx context.Context, socket, ns, ifname string, src, dst net.HardwareAddr, sip netip.Addr) (ceilingFPS float64, saturated bool, err error) {
	var s *afpacket.Socket
	err = nsutil.Do(ns, func() error {
		var err error
		s, err = openTx(ifname)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("relay calibration: %w", err)
	}
	defer s.Close()
	frame := udpFrame(dst, src, sip.As4(), [4]byte{198, 19, 1, 99}, 60)
	sent := 0
	for i := 0; i < calibFrames; i++ {
		if _, err := unix.Write(s.FD(), frame); err == nil {
			sent++
		}
	}
	var rs Stats
	var last uint64
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if rs, err = Command(socket, "stats"); err != nil {
			return 0, false, fmt.Errorf("relay calibration: %w", err)
		}
		if rs.AtoB.Forwarded == last && last > 0 {
			break
		}
		last = rs.AtoB.Forwarded
	}
	span := time.Duration(rs.AtoB.LastTxUnixNano - rs.AtoB.FirstRxUnixNano)
	if rs.AtoB.Forwarded < 2 || span <= 0 {
		return 0, false, fmt.Errorf("relay calibration: the relay forwarded %d of %d frames: it does not work", rs.AtoB.Forwarded, sent)
	}
	return float64(rs.AtoB.Forwarded-1) / span.Seconds(), rs.AtoB.Forwarded < uint64(sent), nil
}

// End stops pid if it is the relay of lab name (its environment carries
// envName=name) and, when start is not zero, started at start (see Start):
// SIGTERM, then SIGKILL after 2 s. A pid that is not such a relay is left
// alone.
func End(pid int, name string, start uint64) error {
	if !isOurs(pid, name, start) {
		return nil
	}
	return endProcess(pid)
}

// isOurs reports whether pid is alive and is the relay of lab name.
func isOurs(pid int, name string, start uint64) bool {
	if !alive(pid) {
		return false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	found := false
	for _, kv := range strings.Split(string(env), "\x00") {
		if kv == envName+"="+name {
			found = true
		}
	}
	if !found {
		return false
	}
	if start != 0 {
		got, err := procStartTime(pid)
		return err == nil && got == start
	}
	return true
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// endProcess sends SIGTERM, then SIGKILL after 2 s, and waits until pid is
// gone.
func endProcess(pid int) error {
	if err := unix.Kill(pid, unix.SIGTERM); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	for _, sig := range []unix.Signal{unix.SIGKILL, 0} {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			if !alive(pid) {
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		if sig != 0 {
			unix.Kill(pid, sig)
		}
	}
	return fmt.Errorf("process %d did not exit", pid)
}

// procStartTime returns field 22 of /proc/PID/stat (start time, clock ticks
// since boot).
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// openTx opens an AF_PACKET socket that only sends, on ifname (in the
// calling thread's namespace).
func openTx(ifname string) (*afpacket.Socket, error) {
	s, err := afpacket.Open(ifname)
	if err != nil {
		return nil, fmt.Errorf("packet socket on %s: %w", ifname, err)
	}
	if err := s.Bind(0); err != nil {
		s.Close()
		return nil, fmt.Errorf("bind packet socket to %s: %w", ifname, err)
	}
	return s, nil
}

// rxFilter passes only IPv4 and IPv6 frames addressed to the port's own MAC.
var rxFilter = mustAssemble([]bpf.Instruction{
	bpf.LoadExtension{Num: bpf.ExtType},
	bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.PACKET_HOST, SkipTrue: 4},
	bpf.LoadAbsolute{Off: 12, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: etherTypeIPv4, SkipTrue: 1},
	bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: etherTypeIPv6, SkipTrue: 1},
	bpf.RetConstant{Val: 1 << 18},
	bpf.RetConstant{Val: 0},
})

func mustAssemble(ins []bpf.Instruction) []bpf.RawInstruction {
	raw, err := bpf.Assemble(ins)
	if err != nil {
		panic(err)
	}
	return raw
}

// openRx opens an AF_PACKET socket receiving the IP frames addressed to
// ifname's MAC (in the calling thread's namespace).
func openRx(ifname string) (*afpacket.Socket, error) {
	s, err := afpacket.Open(ifname)
	if err != nil {
		return nil, fmt.Errorf("packet socket on %s: %w", ifname, err)
	}
	fail := func(what string, err error) (*afpacket.Socket, error) {
		s.Close()
		return nil, fmt.Errorf("%s on %s: %w", what, ifname, err)
	}
	if err := s.AttachFilter(rxFilter); err != nil {
		return fail("attach filter", err)
	}
	if err := s.SetIgnoreOutgoing(); err != nil {
		return fail("ignore outgoing", err)
	}
	if err := unix.SetsockoptInt(s.FD(), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, relayRcvBuf); err != nil {
		return fail("receive buffer", err)
	}
	if err := s.Bind(unix.ETH_P_ALL); err != nil {
		return fail("bind", err)
	}
	return s, nil
}

// relayParams are the per-frame settings, swapped atomically when the
// relay goes live.
type relayParams struct {
	delay, jitter, gap int64 // ns
	loss, reorder, dup float64
	rate               [2]float64 // bit/s, A→B and B→A; 0 unshaped
	limit              int        // shaper queue in frames
}

type relayItem struct {
	slot int32
	dup  bool
	due  int64
	seq  uint64
}

// relayDir forwards one direction: frames read on rxFD go out on txFD.
type relayDir struct {
	rxFD, txFD int
	dst, src   net.HardwareAddr
	local      *dutAddrs
	cpus       []int
	params     *atomic.Pointer[relayParams]
	base       time.Time

	bufs  [][]byte
	lens  []int
	dups  []bool
	free  chan int32
	ready chan relayItem
	heap  *slotHeap
	rng   *rand.Rand

	// dir is 0 for A→B, 1 for B→A (relayParams.rate). shaper holds the
	// frames waiting for the shaped link (read's goroutine only).
	dir    int
	shaper shaper

	received, forwarded, dropped, duplicated, reordered   atomic.Uint64
	overflow, expired, localHits, sendErrors, socketDrops atomic.Uint64
	firstRx, lastTx                                       atomic.Int64 // unix ns
}

func newRelayDir(rxFD, txFD int, dst, src net.HardwareAddr, local *dutAddrs, cpus []int, params *atomic.Pointer[relayParams], mtu int, seed uint64) *relayDir {
	size := mtu + 14 + 4
	n := min(max(relayQueueBytes/size, relayMinSlots), relayMaxSlots)
	d := &relayDir{
		rxFD: rxFD, txFD: txFD, dst: dst, src: src, local: local, cpus: cpus, params: params, base: time.Now(),
		bufs: make([][]byte, n), lens: make([]int, n), dups: make([]bool, n),
		free: make(chan int32, n), ready: make(chan relayItem, n), heap: newSlotHeap(n),
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
	backing := make([]byte, n*size)
	for i := range n {
		d.bufs[i] = backing[i*size : (i+1)*size : (i+1)*size]
		d.free <- int32(i)
	}
	return d
}

func (d *relayDir) pin() {
	runtime.LockOSThread()
	// Exact sleeps: no timer slack on this thread.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if len(d.cpus) > 0 {
		var set unix.CPUSet
		for _, c := range d.cpus {
			set.Set(c)
		}
		_ = unix.SchedSetaffinity(0, &set)
	}
}

func (d *relayDir) now() int64 { return int64(time.Since(d.base)) }

// read is the receive loop: it classifies, rewrites and schedules frames.
func (d *relayDir) read() {
	d.pin()
	scratch := make([]byte, len(d.bufs[0]))
	var seq uint64
	for {
		slot := int32(-1)
		select {
		case slot = <-d.free:
		default:
		}
		buf := scratch
		if slot >= 0 {
			buf = d.bufs[slot]
		}
		n, err := unix.Read(d.rxFD, buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				if slot >= 0 {
					d.free <- slot
				}
				continue
			}
			return
		}
		now := d.now()
		d.received.Add(1)
		if d.firstRx.Load() == 0 {
			d.firstRx.Store(time.Now().UnixNano())
		}
		if slot < 0 {
			// The queue was full when the read began; slots may have
			// come free while it blocked.
			select {
			case slot = <-d.free:
				copy(d.bufs[slot], buf[:n])
				buf = d.bufs[slot]
			default:
				d.overflow.Add(1)
				continue
			}
		}
		switch rewriteFrame(buf[:n], d.dst, d.src, d.local) {
		case frameForward:
		case frameExpired:
			d.expired.Add(1)
			d.free <- slot
			continue
		case frameLocal:
			d.localHits.Add(1)
			d.free <- slot
			continue
		default:
			d.free <- slot
			continue
		}
		p := d.params.Load()
		if p.loss > 0 && d.rng.Float64()*100 < p.loss {
			d.dropped.Add(1)
			d.free <- slot
			continue
		}
		due := now
		if r := p.rate[d.dir]; r > 0 {
			var ok bool
			if due, ok = d.shaper.admit(now, n, r, p.limit); !ok {
				d.overflow.Add(1)
				d.free <- slot
				continue
			}
		}
		due += p.delay
		if p.jitter > 0 {
			due += d.rng.Int64N(2*p.jitter+1) - p.jitter
			due = max(due, now)
		}
		if p.reorder > 0 && d.rng.Float64()*100 < p.reorder {
			due += p.gap
		}
		dup := p.dup > 0 && d.rng.Float64()*100 < p.dup
		seq++
		d.lens[slot] = n
		d.ready <- relayItem{slot: slot, dup: dup, due: due, seq: seq}
	}
}

// write is the send loop: it releases each frame at its due time.
func (d *relayDir) write() {
	d.pin()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var maxSent uint64
	push := func(it relayItem) {
		d.dups[it.slot] = it.dup
		d.heap.push(it.slot, it.due, it.seq)
	}
	for {
		if d.heap.len() == 0 {
			push(<-d.ready)
		}
	drain:
		for {
			select {
			case it := <-d.ready:
				push(it)
			default:
				break drain
			}
		}
		slot, due, _ := d.heap.peek()
		if wait := due - d.now(); wait > 0 {
			// Go timers fire up to ~1 ms late (the netpoller waits in
			// whole milliseconds). Far from the due time, wait on a
			// timer so a new frame can wake us; close to it, sleep on
			// this locked thread with nanosleep in short steps.
			if wait > int64(relayFineWait) {
				timer.Reset(time.Duration(wait) - relayFineWait)
				select {
				case it := <-d.ready:
					timer.Stop()
					push(it)
				case <-timer.C:
				}
			} else {
				ts := unix.NsecToTimespec(min(wait, int64(relayStep)))
				unix.Nanosleep(&ts, nil)
			}
			continue
		}
		d.heap.pop()
		seq := d.heap.seq[slot]
		if seq < maxSent {
			d.reordered.Add(1)
		}
		maxSent = max(maxSent, seq)
		copies := 1
		if d.dups[slot] {
			copies = 2
			d.duplicated.Add(1)
		}
		for range copies {
			if _, err := unix.Write(d.txFD, d.bufs[slot][:d.lens[slot]]); err != nil {
				d.sendErrors.Add(1)
				continue
			}
			d.forwarded.Add(1)
		}
		d.lastTx.Store(time.Now().UnixNano())
		d.free <- slot
	}
}

func (d *relayDir) stats() DirStats {
	if ps, err := unix.GetsockoptTpacketStats(d.rxFD, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
		d.socketDrops.Add(uint64(ps.Drops)) // reading resets the kernel's count
	}
	return DirStats{
		Received: d.received.Load(), Forwarded: d.forwarded.Load(), Dropped: d.dropped.Load(),
		Duplicated: d.duplicated.Load(), Reordered: d.reordered.Load(), Overflow: d.overflow.Load(),
		SocketDrops: d.socketDrops.Load(), Expired: d.expired.Load(), Local: d.localHits.Load(),
		SendErrors: d.sendErrors.Load(), FirstRxUnixNano: d.firstRx.Load(), LastTxUnixNano: d.lastTx.Load(),
	}
}

func (d *relayDir) reset() {
	d.stats() // clear the kernel's drop count
	for _, c := range []*atomic.Uint64{&d.received, &d.forwarded, &d.dropped, &d.duplicated, &d.reordered,
		&d.overflow, &d.expired, &d.localHits, &d.sendErrors, &d.socketDrops} {
		c.Store(0)
	}
	d.firstRx.Store(0)
	d.lastTx.Store(0)
}

// Main is the relay process of lab name with the Spec specJSON: it
// forwards until SIGTERM or until its namespace is gone, and returns the
// exit code. Enter calls it.
func Main(name, specJSON string) int {
	log.SetPrefix("relay " + name + ": ")
	ready := os.NewFile(3, "ready")
	fail := func(err error) int {
		log.Print(err)
		if ready != nil {
			fmt.Fprintf(ready, "error: %v\n", err)
		}
		return 1
	}
	var spec Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fail(fmt.Errorf("parse relay spec: %w", err))
	}
	ctx, stop := signal.NotifyContext(context.Background(), unix.SIGTERM, unix.SIGINT)
	defer stop()
	r, err := newRelay(spec)
	if err != nil {
		return fail(err)
	}
	os.Remove(spec.Socket)
	ln, err := net.Listen("unix", spec.Socket)
	if err != nil {
		return fail(fmt.Errorf("control socket: %w", err))
	}
	defer os.Remove(spec.Socket)
	go r.serve(ln)
	for _, d := range []*relayDir{r.ab, r.ba} {
		go d.read()
		go d.write()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.watch(ctx, cancel)
	if ready != nil {
		fmt.Fprintln(ready, "ok")
		ready.Close()
	}
	log.Printf("forwarding %s <-> %s in %s (pid %d)", spec.A.Interface, spec.B.Interface, spec.Namespace, os.Getpid())
	<-ctx.Done()
	ln.Close()
	return 0
}

type relay struct {
	spec    Spec
	ab, ba  *relayDir
	params  atomic.Pointer[relayParams]
	live    relayParams
	peak    atomic.Uint64 // fps, float bits
	started time.Time
	isLive  atomic.Bool
}

func newRelay(spec Spec) (*relay, error) {
	r := &relay{spec: spec, started: time.Now()}
	c := spec.Settings
	r.live = relayParams{delay: int64(c.Delay), jitter: int64(c.Jitter), gap: int64(c.ReorderGap),
		loss: c.LossPercent, reorder: c.ReorderPercent, dup: c.DuplicatePercent,
		rate: [2]float64{float64(c.RateABBps), float64(c.RateBABps)}, limit: c.LimitPackets}
	if r.live.limit <= 0 {
		r.live.limit = DefaultLimitPackets
	}
	r.params.Store(&relayParams{}) // calibration: forward at once
	seed := c.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	local := &dutAddrs{}
	for _, a := range []netip.Addr{spec.A.IPv4, spec.B.IPv4} {
		if a.Is4() {
			local.v4 = append(local.v4, a.As4())
		}
	}
	for _, a := range []netip.Addr{spec.A.IPv6, spec.B.IPv6} {
		if a.Is6() {
			local.v6 = append(local.v6, a.As16())
		}
	}
	var rxA, txA, rxB, txB *afpacket.Socket
	err := nsutil.Do(spec.Namespace, func() error {
		var err error
		if rxA, err = openRx(spec.A.Interface); err != nil {
			return err
		}
		if rxB, err = openRx(spec.B.Interface); err != nil {
			return err
		}
		if txA, err = openTx(spec.A.Interface); err != nil {
			return err
		}
		txB, err = openTx(spec.B.Interface)
		return err
	})
	if err != nil {
		return nil, err
	}
	r.ab = newRelayDir(rxA.FD(), txB.FD(), spec.B.PeerMAC, spec.B.MAC, local, spec.CPUs, &r.params, spec.B.MTU, seed)
	r.ba = newRelayDir(rxB.FD(), txA.FD(), spec.A.PeerMAC, spec.A.MAC, local, spec.CPUs, &r.params, spec.A.MTU, seed+1)
	r.ba.dir = 1
	return r, nil
}

func (r *relay) stats() Stats {
	rs := Stats{
		AtoB: r.ab.stats(), BtoA: r.ba.stats(), Config: r.spec.Settings,
		PeakFPS: math.Float64frombits(r.peak.Load()), Uptime: time.Since(r.started),
	}
	return rs
}

// serve answers control connections: one command line, one JSON reply.
func (r *relay) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil && err != io.EOF {
				return
			}
			var reply struct {
				Error string `json:"error,omitempty"`
				Stats Stats  `json:"stats"`
			}
			switch strings.TrimSpace(line) {
			case "stats":
			case "live":
				r.ab.reset()
				r.ba.reset()
				r.peak.Store(0)
				p := r.live
				r.params.Store(&p)
				r.isLive.Store(true)
			default:
				reply.Error = fmt.Sprintf("unknown command %q", strings.TrimSpace(line))
			}
			reply.Stats = r.stats()
			b, _ := json.Marshal(reply)
			c.Write(append(b, '\n'))
		}()
	}
}

// watch tracks the highest one-direction forwarding rate over 100 ms, and
// ends the relay (cancel) once its DUT namespace is gone: the lab was
// removed without Down, e.g. by hand.
func (r *relay) watch(ctx context.Context, cancel func()) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var lastAB, lastBA uint64
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			ab, ba := r.ab.forwarded.Load(), r.ba.forwarded.Load()
			dt := now.Sub(last).Seconds()
			if r.isLive.Load() && ab >= lastAB && ba >= lastBA {
				fps := float64(max(ab-lastAB, ba-lastBA)) / dt
				if fps > math.Float64frombits(r.peak.Load()) {
					r.peak.Store(math.Float64bits(fps))
				}
			}
			lastAB, lastBA, last = ab, ba, now
			if _, err := os.Stat(filepath.Join("/run/netns", r.spec.Namespace)); err != nil {
				log.Printf("namespace %s is gone: exiting", r.spec.Namespace)
				cancel()
				return
			}
		}
	}
}
