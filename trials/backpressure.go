package trials

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// TxPressure is what one port's transmit thread measured about how the
// kernel took its frames during a trial. It separates "the tester could not
// go faster" (its thread busy all the time, nothing refused) from "the path
// held the tester back" (the kernel refused frames or kept the transmit
// ring's slots while the thread had time to spare): the second is Ethernet
// flow control (PAUSE) on a real port, and a slow DUT behind a veth in the
// lab.
type TxPressure struct {
	// Port is "A" or "B".
	Port string `json:"port"`
	// WallNs is how long the transmit loop ran.
	WallNs int64 `json:"wall_ns"`
	// CPUNs is the sending thread's CPU time (user + system) over WallNs,
	// from getrusage(RUSAGE_THREAD); 0 when unknown.
	CPUNs int64 `json:"cpu_ns"`
	// Kicks counts transmit calls (sendto on the TX ring).
	Kicks uint64 `json:"kicks"`
	// Refused counts transmit calls the kernel refused (ENOBUFS: the
	// device or the next hop dropped a frame and the kernel put it back
	// in the ring; EAGAIN: socket buffer full). The frames were sent again.
	Refused uint64 `json:"refused"`
	// RingFullWaits counts times the sender found every TX ring slot held
	// by the kernel; RingFullNs is the time it spent waiting for one.
	RingFullWaits uint64 `json:"ring_full_waits"`
	RingFullNs    int64  `json:"ring_full_ns"`
	// RingFullMaxNs is the longest single wait for a free slot.
	RingFullMaxNs int64 `json:"ring_full_max_ns"`
	// DrainNs is how long, after the last frame was queued, the kernel
	// refused to take the ring's last frames (a full send buffer or device
	// queue: the path pushing back); the offered load, measured to when it
	// took them, counts that time. (The slots' later release, when a veth's
	// DUT is done with the frames, is the DUT's time and counts nowhere.)
	DrainNs int64 `json:"drain_ns,omitempty"`
	// PauseRx is the Ethernet PAUSE frames the port received during the
	// trial (the link partner asked it to stop sending), from the driver's
	// statistics; PauseCounted says the driver has such counters (real
	// NICs; not veth).
	PauseRx      uint64 `json:"pause_rx_frames,omitempty"`
	PauseCounted bool   `json:"pause_counted,omitempty"`
	// SendBuffer says the RingFull waits were for room in a socket's send
	// buffer (the UDP transport: the kernel still held the datagrams sent
	// before, in a device queue or an overrun DUT's backlog behind a veth),
	// not for TX ring slots.
	SendBuffer bool `json:"send_buffer,omitempty"`
}

// waitedFor names what the sender waited for in RingFull*.
func (p TxPressure) waitedFor() string {
	if p.SendBuffer {
		return "room in the socket's send buffer"
	}
	return "transmit ring slots"
}

// Busy is the share (0–1) of the transmit loop's time the sending thread
// spent on a CPU; 0 when unknown.
func (p TxPressure) Busy() float64 {
	if p.WallNs <= 0 || p.CPUNs <= 0 {
		return 0
	}
	return min(float64(p.CPUNs)/float64(p.WallNs), 1)
}

// RefusedShare is the share of transmit calls the kernel refused.
func (p TxPressure) RefusedShare() float64 {
	if p.Kicks == 0 {
		return 0
	}
	return float64(p.Refused) / float64(p.Kicks)
}

// RingFullShare is the share of the loop's time spent waiting for a free
// TX ring slot.
func (p TxPressure) RingFullShare() float64 {
	if p.WallNs <= 0 {
		return 0
	}
	return float64(p.RingFullNs) / float64(p.WallNs)
}

// Thresholds of the held-back rule (HeldBack).
const (
	// heldRefusedShare: at least this share of transmit calls refused
	// means the path pushed back throughout the trial, not once.
	heldRefusedShare = 0.05
	// heldRingFullShare: the sender waited for ring slots at least this
	// share of the time.
	heldRingFullShare = 0.25
	// heldIdleBusy: a thread on a CPU less than this share of the time
	// had time to spare.
	heldIdleBusy = 0.7
	// heldBusy: a thread on a CPU less than this share of the time was
	// not what kept it from sending.
	heldBusy = 0.9
	// heldWaitExplains: waiting for ring slots for the time this share of
	// the frames not sent were due in is the path's doing.
	heldWaitExplains = 0.5
	// heldBelowCeiling: an offered load below this fraction of the
	// calibrated ceiling is far below what the tester can carry.
	heldBelowCeiling = 0.8
)

// HeldBack reports whether the path, not the tester, held a sender back:
// the link partner sent PAUSE frames; or the kernel refused its frames
// throughout the trial (a PAUSEd NIC queue, a DUT dropping at a veth's far
// end that the kernel reports back and re-sends); or the kernel kept the TX
// ring's slots (frames queued in an overrun DUT's backlog) while the sending
// thread had time to spare (mostly off a CPU, or off it at times and
// waiting long enough to explain the frames not sent: intended minus
// offered fps over txSeconds; the time the slots were held after the last
// frame was queued, DrainNs, counts as waiting) — and the
// offered load (fps, of that port) was far below the tester's calibrated
// ceiling (ceilingFPS, 0 when unknown). It returns a phrase saying what was
// seen.
func HeldBack(p TxPressure, offeredFPS, intendedFPS, txSeconds, ceilingFPS float64) (bool, string) {
	if ceilingFPS > 0 && offeredFPS >= ceilingFPS*heldBelowCeiling {
		return false, ""
	}
	var seen []string
	if p.PauseRx > 0 {
		seen = append(seen, fmt.Sprintf("the link partner sent %d PAUSE frames (Ethernet flow control acted)", p.PauseRx))
	}
	if p.Refused > 0 && p.RefusedShare() >= heldRefusedShare {
		seen = append(seen, fmt.Sprintf("the kernel refused %d of %d transmit calls (the next hop was full)", p.Refused, p.Kicks))
	}
	missing := (intendedFPS - offeredFPS) * txSeconds
	waited := float64(p.RingFullNs+p.DrainNs) / 1e9 * intendedFPS // frames due while waiting
	switch {
	case p.RingFullShare() >= heldRingFullShare && p.Busy() > 0 && p.Busy() < heldIdleBusy:
		full := "the transmit ring was full"
		if p.SendBuffer {
			full = "the socket's send buffer was full"
		}
		seen = append(seen, fmt.Sprintf("%s %.0f%% of the time while the sending thread was on a CPU only %.0f%% of it",
			full, 100*p.RingFullShare(), 100*p.Busy()))
	case missing > 0 && waited >= heldWaitExplains*missing && p.Busy() > 0 && p.Busy() < heldBusy:
		after := ""
		if p.DrainNs > 0 {
			after = fmt.Sprintf(", %.1f ms of it after the last frame was queued", float64(p.DrainNs)/1e6)
		}
		seen = append(seen, fmt.Sprintf("the sender waited %.1f ms for %s the kernel held (frames queued in the path%s), time for %.0f of the %.0f frames not sent",
			float64(p.RingFullNs+p.DrainNs)/1e6, p.waitedFor(), after, waited, missing))
	}
	if len(seen) == 0 {
		return false, ""
	}
	return true, fmt.Sprintf("port %s: %s", p.Port, strings.Join(seen, "; "))
}

// FlowControlNote is Result.FlowControlReason's first words for an accepted
// rate of fps frames per second.
func FlowControlNote(fps float64) string {
	return fmt.Sprintf("flow-controlled: the DUT held the tester back at %.0f fps", fps)
}

// flowCheck collects the generator shortfalls of a trial's streams and
// decides, once every other tester limit is known, whether they were the
// path's doing (flow control) or the tester's.
type flowCheck struct {
	short    [2][]string // generator reasons per sending port
	fps      [2]float64  // offered fps per sending port
	intended [2]float64  // intended fps per sending port
	txs      [2]float64  // longest stream send time per sending port
}

// add records one stream's generator verdict (generatorReasons) and its
// offered load; port is the sending port's index and p its measurements
// (nil when unknown). passOn says the caller should add the reasons to the
// tester limits at once. A stall (transient) the sender spent waiting for
// ring slots the kernel held (p.RingFullMaxNs covers the lag) is not the
// tester's: a DUT whose queue holds the slots is overloaded, so the loss is
// its own, and the stall is dropped.
func (f *flowCheck) add(port int, r StreamResult, transient bool, reasons []string, p *TxPressure, maxLag time.Duration) (passOn bool) {
	f.fps[port] += r.OfferedFPS
	f.intended[port] += r.IntendedFPS
	f.txs[port] = max(f.txs[port], r.TxSeconds)
	if transient && p != nil && r.MaxLagNs <= p.RingFullMaxNs+int64(maxLag) {
		if r.OfferedFPS < r.IntendedFPS && stallShortfall(r) {
			if p.RingFullNs == 0 {
				return true // a stall of the host, not the path's
			}
			// Short of the rate because the kernel held its ring
			// slots: the path may have held it back (apply decides).
			f.short[port] = append(f.short[port], reasons...)
		}
		return false
	}
	if transient || len(reasons) == 0 {
		return true
	}
	f.short[port] = append(f.short[port], reasons...)
	return false
}

// apply decides: when some generator fell short, no other tester limit
// (receive-side kernel drops, the calibrated ceiling) is in lim, and every
// short port was held back by the path (press, per port; nil when that port
// did not send or did not measure), the trial is flow-controlled; when not
// held back but the DUT was overloaded at the load offered (lost frames and
// forwarded below it to the end, Result.Overloaded), with no other tester
// limit, the loss is the DUT's (Result.OverloadReason); otherwise the
// shortfalls are tester limits.
func (f *flowCheck) apply(res *Result, lim *limits, press [2]*TxPressure, ceiling map[int]float64, frameSize int) {
	var why []string
	held, any := true, false
	for i := range f.short {
		if len(f.short[i]) == 0 {
			continue
		}
		any = true
		if press[i] == nil {
			held = false
			break
		}
		ok, w := HeldBack(*press[i], f.fps[i], f.intended[i], f.txs[i], ceilingFor(ceiling, frameSize))
		if !ok {
			held = false
			break
		}
		why = append(why, w)
	}
	if !any {
		return
	}
	if !held && len(lim.reasons) == 0 {
		// No other tester limit (receive-side drops, the ceiling): a
		// DUT that could not forward even the load offered lost
		// frames of its own, whatever the shortfall.
		if ok, w := res.Overloaded(); ok {
			res.OverloadReason = w + ": the loss is the DUT's at the load offered (" + joinReasons(append(slices.Clone(f.short[0]), f.short[1]...)) + ")"
			return
		}
	}
	if !held || len(lim.reasons) > 0 {
		for i := range f.short {
			lim.add(false, f.short[i])
		}
		return
	}
	t := res.Totals()
	res.FlowControlled = true
	why = append(why, f.short[0]...)
	res.FlowControlReason = FlowControlNote(t.OfferedFPS) + " (" + joinReasons(append(why, f.short[1]...)) + ")"
}
