//go:build linux

package trials

import (
	"time"

	"golang.org/x/sys/unix"
)

// txPressure accumulates a transmitter's TxPressure on its own locked
// thread; nothing in it allocates.
type txPressure struct {
	start, cpu0 int64
	p           TxPressure
}

// threadCPU is the calling thread's CPU time in ns, or -1.
func threadCPU() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// begin starts the measurement on the (locked) sending thread.
func (x *txPressure) begin() {
	x.p = TxPressure{}
	x.start, x.cpu0 = time.Now().UnixNano(), threadCPU()
}

// end closes it, on the same thread.
func (x *txPressure) end() {
	x.p.WallNs = time.Now().UnixNano() - x.start
	if c := threadCPU(); c >= 0 && x.cpu0 >= 0 {
		x.p.CPUNs = c - x.cpu0
	}
}

// kicked counts one transmit call; refused says the kernel refused it.
func (x *txPressure) kicked(refused bool) {
	x.p.Kicks++
	if refused {
		x.p.Refused++
	}
}

// ringFull records a wait for a free ring slot that began at since.
func (x *txPressure) ringFull(since time.Time) {
	d := int64(time.Since(since))
	x.p.RingFullWaits++
	x.p.RingFullNs += d
	x.p.RingFullMaxNs = max(x.p.RingFullMaxNs, d)
}

// drained records that the kernel released the ring's last slot drain ns
// after the sender finished queueing and began to wait for it (flush).
func (x *txPressure) drained(drain int64) {
	x.p.DrainNs += max(drain, 0)
}

// txPressures collects the raw transmitters' measurements into
// res.TxPressure and returns them per port (nil: the port did not send on a
// raw transmitter).
// paused is each port's PAUSE frames received (pauseSnap.since; -1:
// not counted).
func txPressures(txs [2]trialTx, res *Result, paused [2]int64) [2]*TxPressure {
	var out [2]*TxPressure
	for i, tx := range txs {
		t, ok := tx.(*transmitter)
		if !ok || t == nil {
			continue
		}
		p := t.press.p
		p.Port = t.p.name
		if paused[i] >= 0 {
			p.PauseRx, p.PauseCounted = uint64(paused[i]), true
		}
		res.TxPressure = append(res.TxPressure, p)
		out[i] = &res.TxPressure[len(res.TxPressure)-1]
	}
	return out
}
