//go:build linux

package trials

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSender is a batchSender that counts what paceLoop asks of it.
type fakeSender struct {
	frames, pushes, idles, flushes int
	failAt                         int // queue fails once frames reach it (0: never)
}

var errFake = errors.New("fake send error")

func (f *fakeSender) queue(i int, s *streamState, n int, ns int64) (int64, error) {
	if f.failAt > 0 && f.frames+n >= f.failAt {
		return ns, errFake
	}
	f.frames += n
	s.queued += uint64(n)
	s.sent += uint64(n)
	s.lastNs = ns
	return ns, nil
}
func (f *fakeSender) push() error  { f.pushes++; return nil }
func (f *fakeSender) idle()        { f.idles++ }
func (f *fakeSender) flush() error { f.flushes++; return nil }

func burstState(total uint64, batch int) *streamState {
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	st.pacer = Pacer{Total: total, MaxBatch: batch}
	return st
}

// TestPaceLoop: an unpaced burst goes out in full batches, one push per
// round and one flush at the end; a queue error ends the loop (flushed) and
// comes back; a set stop flag sends nothing.
func TestPaceLoop(t *testing.T) {
	var stop atomic.Bool
	f := &fakeSender{}
	st := burstState(1000, 32)
	if err := paceLoop(f, []*streamState{st}, 0, 0, &stop); err != nil {
		t.Fatal(err)
	}
	if f.frames != 1000 || st.queued != 1000 || f.pushes != 32 || f.flushes != 1 {
		t.Errorf("burst of 1000 in batches of 32: frames %d queued %d pushes %d flushes %d, want 1000 1000 32 1",
			f.frames, st.queued, f.pushes, f.flushes)
	}

	f = &fakeSender{failAt: 100}
	if err := paceLoop(f, []*streamState{burstState(1000, 32)}, 0, 0, &stop); !errors.Is(err, errFake) || f.flushes != 1 {
		t.Errorf("failing queue: err %v flushes %d, want errFake and 1", err, f.flushes)
	}

	stop.Store(true)
	f = &fakeSender{}
	if err := paceLoop(f, []*streamState{burstState(1000, 32)}, 0, 0, &stop); err != nil || f.frames != 0 || f.flushes != 1 {
		t.Errorf("stopped: err %v frames %d flushes %d, want nil 0 1", err, f.frames, f.flushes)
	}
}

// TestPaceLoopPaced: a paced stream is sent no faster than its schedule (the
// loop sleeps between batches; no hard stop, so a stalled box only makes it
// later) and the hard stop cuts a generator off.
func TestPaceLoopPaced(t *testing.T) {
	var stop atomic.Bool
	f := &fakeSender{}
	st := newStreamState(Stream{ID: 1, Direction: AtoB})
	st.pacer = NewDurationPacer(10000, 50*time.Millisecond, nil, pacedBatch)
	start := time.Now()
	if err := paceLoop(f, []*streamState{st}, 0, 0, &stop); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); f.frames != int(st.pacer.Total) || el < 40*time.Millisecond {
		t.Errorf("10000 fps for 50 ms: %d of %d frames in %v, want all, in at least 40 ms", f.frames, st.pacer.Total, el)
	}
	if f.idles == 0 {
		t.Errorf("paced stream: no idle round, want the loop to wait between batches")
	}

	f = &fakeSender{}
	st = newStreamState(Stream{ID: 1, Direction: AtoB})
	st.pacer = NewDurationPacer(10000, time.Hour, nil, pacedBatch)
	start = time.Now()
	if err := paceLoop(f, []*streamState{st}, 20*time.Millisecond, 0, &stop); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second || uint64(f.frames) >= st.pacer.Total {
		t.Errorf("hard stop 20 ms on a 1 h trial: ran %v, sent %d frames, want cut off", el, f.frames)
	}
}

// TestPaceLoopAllocs: the pace loop allocates nothing, whatever the batch
// count.
func TestPaceLoopAllocs(t *testing.T) {
	var stop atomic.Bool
	f := &fakeSender{}
	st := burstState(4096, 32)
	streams := []*streamState{st}
	allocs := testing.AllocsPerRun(100, func() {
		st.queued, st.catch = 0, CatchUp{}
		if err := paceLoop(f, streams, 0, 0, &stop); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("paceLoop of 128 batches allocates %v times, want 0", allocs)
	}
}
