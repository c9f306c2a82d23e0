//go:build linux

package trials

import (
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// txThread readies the calling, locked OS thread to send: timer slack 1 ns
// (sleep wakes on time), pinned to CPU cpu when cpu ≥ 0, and a larger CPU
// share (nice −10, root or CAP_SYS_NICE): on a busy box a descheduled sender
// falls behind and catches up with a burst (the trial is then marked
// transiently tester-limited, and rfc2544 runs it again). restore puts the
// thread back as it was; call it before runtime.UnlockOSThread, since Go
// reuses the thread for any goroutine.
//
// Not SCHED_FIFO: on the 2-CPU lab host it cut a single sender's typical lag
// from 1–6 ms to 0.1–0.7 ms, but two real-time senders (a bidirectional
// trial) and the kernel forwarding they run in their own context starved
// the receive side: trials at 95 % of the shaped rate lost 12 % of their
// frames and a sender fell 223 ms behind.
func txThread(cpu int) (restore func()) {
	var oldSet unix.CPUSet
	haveSet := unix.SchedGetaffinity(0, &oldSet) == nil
	old, oldErr := unix.SchedGetAttr(0, 0)
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	pinThread(cpu)
	sched := ""
	if unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), txNice) == nil {
		sched = txSchedNice
	}
	txSched.Store(sched)
	return func() {
		if oldErr == nil {
			old.Size = unix.SizeofSchedAttr
			_ = unix.SchedSetAttr(0, old, 0)
		}
		if haveSet {
			_ = unix.SchedSetaffinity(0, &oldSet)
		}
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // the thread's default
	}
}

// txNice is the nice value of sending threads (per thread on Linux), and
// txSchedNice its Paths.TxSched.
const (
	txNice      = -10
	txSchedNice = "nice -10"
)

// txSched is how the latest sending thread was scheduled (Paths.TxSched).
var txSched atomic.Value

// lastTxSched returns txSched as a string ("" before any trial).
func lastTxSched() string {
	s, _ := txSched.Load().(string)
	return s
}

// sleep blocks the locked thread for d (nanosleep, timer slack 1 ns).
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}

// reserveProcs raises GOMAXPROCS, never lowers it, so that the locked
// sending and receiving threads of every trial running in the process (n
// more from now until release is called) leave two Ps to the rest of it.
// A locked thread back from a system call (a kick, a nap) needs a P before
// it runs Go code again; with GOMAXPROCS at the 2 CPUs of the lab host, the
// Ps were held by threads the kernel had descheduled, and a sender waited
// behind them. With one CPU kept busy by stress-ng, 7 lab tests (raw, udp,
// xdp) failed 4 times in 5 rounds at GOMAXPROCS=2, on generator stalls of
// up to 280 ms, and never in 5 rounds at 6 or 8 (2026-12-01, same runs).
// The count is the process's, not one trial's: port B's half of a trial
// (the agent's sender and receiver) runs beside port A's when the agent is
// in the same process, and a bidirectional trial through it at
// GOMAXPROCS 4 saw its generators fall 55-236 ms behind (2026-12-02).
func reserveProcs(n int) (release func()) {
	total := lockedThreads.Add(int32(n))
	if want := int(total) + 2; runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
	return func() { lockedThreads.Add(-int32(n)) }
}

// lockedThreads counts the process's locked traffic threads (reserveProcs).
var lockedThreads atomic.Int32

// pinThread binds the calling (locked) OS thread to cpu; a negative cpu or a
// failure leaves it free.
func pinThread(cpu int) {
	if cpu < 0 {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	_ = unix.SchedSetaffinity(0, &set)
}

// allowedCPU is the q-th CPU (from 0) this process may run on (its
// affinity mask, e.g. taskset's), or -1 (not pinned) when the mask cannot
// be read or has fewer CPUs.
func allowedCPU(q int) int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return -1
	}
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			if q == 0 {
				return c
			}
			q--
		}
	}
	return -1
}
