//go:build linux

package trials

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// TestLaneShareExact: over n queues, each frame of a stream's plan falls to
// exactly one queue (those ≡ q mod n), the shares sum to the plan, and each
// queue's pacer runs at 1/n of the rate (rate change included).
func TestLaneShareExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		for _, total := range []uint64{1, 2, 3, 5, 64, 1000, 148810, 1488096} {
			var sum uint64
			for q := range n {
				got := laneShare(total, q, n)
				var want uint64
				for s := uint64(q); s < min(total, 1e4); s += uint64(n) {
					want++
				}
				if total < 1e4 && got != want {
					t.Errorf("laneShare(%d, %d, %d) = %d, want %d", total, q, n, got, want)
				}
				sum += got
			}
			if sum != total {
				t.Errorf("%d queues: shares of %d sum to %d", n, total, sum)
			}
		}
	}
	p := NewDurationPacer(100000, time.Second, &RateChange{At: 500 * time.Millisecond, RateFPS: 50000}, 32)
	var sum uint64
	for q := range 2 {
		lp, ok := lanePacer(p, q, 2)
		if !ok || lp.RateFPS != 50000 || lp.Change == nil || lp.Change.RateFPS != 25000 || lp.Change.At != p.Change.At {
			t.Errorf("queue %d of 2: pacer %+v (change %+v), want 50000 fps changing to 25000 at 500 ms", q, lp, lp.Change)
		}
		sum += lp.Total
	}
	if p.Change.RateFPS != 50000 {
		t.Errorf("the stream's own rate change was altered: %+v", p.Change)
	}
	if sum != p.Total {
		t.Errorf("queue totals sum to %d, want the stream's %d", sum, p.Total)
	}
	if _, ok := lanePacer(Pacer{Total: 1}, 1, 2); ok {
		t.Errorf("a one-frame burst gave queue 1 of 2 a frame to send")
	}
	if lp, ok := lanePacer(Pacer{MaxBatch: 256}, 1, 2); !ok || lp.Total != 0 {
		t.Errorf("a full-speed timed stream: queue 1's pacer %+v, %v; want unlimited", lp, ok)
	}
}

// TestQueueChecks: too many queues for the CPUs, and flows that cannot be
// dealt out whole, are refused naming --queues and the fix; one flow per
// stream gets one per queue, ordered per flow.
func TestQueueChecks(t *testing.T) {
	if err := checkQueueCPUs(3, 2); err == nil || !strings.Contains(err.Error(), "--queues") || !strings.Contains(err.Error(), "at most --queues 2") {
		t.Errorf("3 queues on 2 CPUs: %v; want refused naming --queues and the most", err)
	}
	if err := checkQueueCPUs(2, 2); err != nil {
		t.Errorf("2 queues on 2 CPUs: %v", err)
	}
	spec := Spec{Streams: []Stream{{ID: 1, Flows: 3}}}
	if err := checkQueueFlows(spec, 2); err == nil || !strings.Contains(err.Error(), "--queues") || !strings.Contains(err.Error(), "multiple of 2") {
		t.Errorf("3 flows over 2 queues: %v; want refused naming --queues and the fix", err)
	}
	for _, f := range []int{0, 1, 2, 4} {
		if err := checkQueueFlows(Spec{Streams: []Stream{{ID: 1, Flows: f}}}, 2); err != nil {
			t.Errorf("%d flows over 2 queues: %v", f, err)
		}
	}
	st := newStreamState(Stream{ID: 1})
	if f := queueFlows(st, 2); f != 2 || len(st.flowTop) != 2 {
		t.Errorf("one flow over 2 queues: %d flows, flowTop %v; want 2 and order judged per flow", f, st.flowTop)
	}
	st = newStreamState(Stream{ID: 1})
	if f := queueFlows(st, 1); f != 1 || st.flowTop != nil {
		t.Errorf("one flow, one queue: %d flows, flowTop %v; want 1, nil", f, st.flowTop)
	}
}

// queueDelta is each queue's count after less before.
func queueDelta(after, before []uint64) []uint64 {
	d := make([]uint64, len(after))
	for q := range after {
		d[q] = after[q] - before[q]
	}
	return d
}

// TestXDPQueuesLoop: on a loop lab (A's veth straight to B's) with two
// queues per veth, the xdp transport with Queues 2 sends a stream's frames
// over both of A's queues, half each, and B's socket on queue q receives
// exactly what A's queue q sent (a veth keeps the queue): both queues
// carried frames, and the two receive loops' merged accounting counts
// every frame once, in order within each flow. The frame size is drawn,
// the simple IMIX among them: each queue then sends its frames of the mix
// (queue q the frames ≡ q mod 2 of the pattern), every frame at its
// pattern's size. Asking more queues than the CPUs (or the veths) have is
// refused naming --queues, before traffic.
func TestXDPQueuesLoop(t *testing.T) {
	rng := xdpRand(t)
	rate := float64(20000 + rng.IntN(60001))
	size := []int{64, 512, 1518, framing.SizeIMIX}[rng.IntN(4)]
	t.Logf("%s at %.0f fps over 2 queues", framing.SizeName(size), rate)
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop, Queues: 2})
	cfg := xdpPortsOf(st)
	cfg.Queues = 3
	if _, err := OpenXDP(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--queues") {
		t.Errorf("3 queues on 2-queue veths and %d CPUs: %v; want refused naming --queues", runtime.NumCPU(), err)
	}
	cfg.Queues = 2
	e := openXDPEngine(t, cfg)
	if p := e.Paths(); !strings.Contains(p.XDP, "2 queues") {
		t.Errorf("paths %+v: want the XDP path to say 2 queues", p)
	}
	s0, r0, err := e.QueueCounts()
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{FrameSize: size, RateFPS: rate, Duration: time.Second, Settle: 300 * time.Millisecond,
		Streams: []Stream{{ID: 1, Direction: AtoB}}}
	r := runXDPUntrammelled(t, e, spec, 3)
	s1, r1, err := e.QueueCounts()
	if err != nil {
		t.Fatal(err)
	}
	sent, rcvd := queueDelta(s1[0], s0[0]), queueDelta(r1[1], r0[1])
	t.Logf("port A sent per queue %v; port B received per queue %v", sent, rcvd)
	s := r.Streams[0]
	if r.TesterLimited || s.Lost != 0 || s.Reordered != 0 || s.Duplicate != 0 {
		t.Errorf("tester-limited %v (%s), lost %d, reordered %d, duplicate %d; want a clean trial on a loop", r.TesterLimited, r.TesterLimitReason, s.Lost, s.Reordered, s.Duplicate)
	}
	half := [2]uint64{laneShare(s.Sent, 0, 2), laneShare(s.Sent, 1, 2)}
	for q := range 2 {
		if sent[q] != half[q] || rcvd[q] != sent[q] {
			t.Errorf("queue %d: A sent %d (want %d, its share of %d), B received %d (want all of them)", q, sent[q], half[q], s.Sent, rcvd[q])
		}
	}
	if s.Received != rcvd[0]+rcvd[1] {
		t.Errorf("stream received %d, the queues %d + %d", s.Received, rcvd[0], rcvd[1])
	}
	if m, ok := framing.MixOf(size); ok {
		// A frame of the wrong size for its place in the pattern is
		// counted lost (above); every size was sent in its share.
		t.Logf("per size: %+v", s.Sizes)
		if len(s.Sizes) != len(m.Parts) {
			t.Errorf("per-size counts %+v, want one per size of %s", s.Sizes, m.Name)
		}
		for _, c := range s.Sizes {
			if c.Sent == 0 || c.Received != c.Sent {
				t.Errorf("%d B: %d sent, %d received; want some sent, all received", c.FrameSize, c.Sent, c.Received)
			}
		}
	}
	if d := s.OfferedFPS/rate - 1; d < -0.01 || d > 0.01 {
		t.Errorf("offered %.0f fps for %.0f asked (%+.2f %%), want within 1 %%", s.OfferedFPS, rate, 100*d)
	}
}

// BenchmarkXDPQueues measures the xdp tester's full-speed ceilings with one
// and with two queues per port on one loop lab whose veths have two
// queues, in the same run (the order alternating between iterations):
// CalibrateXDP's generator rate (what port A offered) and receiver rate
// (what port B counted, with its drops) at 64 and 1518 B. It logs each
// iteration and the medians with the ratio 2 queues / 1. On a 2-CPU box,
// two queues is the most that can be measured, and each queue's sender
// then shares a CPU with the receive loops.
//
//	flock /tmp/rfc2544-lab.lock go test -run '^$' -bench XDPQueues -benchtime 3x -v ./trials
func BenchmarkXDPQueues(b *testing.B) {
	st := labtest.New(b, lab.Config{Topology: lab.TopologyLoop, Queues: 2})
	sizes := []int{64, 1518}
	type fig struct{ gen, rcv []float64 }
	figs := map[[2]int]*fig{}
	for i := 0; i < b.N; i++ {
		order := []int{1, 2}
		if i%2 == 1 {
			order = []int{2, 1}
		}
		for _, n := range order {
			cfg := xdpPortsOf(st)
			cfg.Queues = n
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			pts, err := CalibrateXDP(ctx, cfg, sizes, time.Second)
			cancel()
			if err != nil {
				b.Fatalf("calibrate with %d queues: %v", n, err)
			}
			for _, p := range pts {
				k := [2]int{n, p.FrameSize}
				if figs[k] == nil {
					figs[k] = &fig{}
				}
				figs[k].gen = append(figs[k].gen, p.OfferedFPS)
				figs[k].rcv = append(figs[k].rcv, p.ReceivedFPS)
				b.Logf("iteration %d, %d queue(s), %d B: generator %.0f fps, receiver %.0f fps (%d dropped), path %s",
					i, n, p.FrameSize, p.OfferedFPS, p.ReceivedFPS, p.KernelDrops, p.Paths.XDP)
			}
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for _, s := range sizes {
		one, two := figs[[2]int{1, s}], figs[[2]int{2, s}]
		if one == nil || two == nil {
			continue
		}
		b.Logf("%d B, medians of %d: generator 1 queue %.0f fps, 2 queues %.0f fps (×%.3f); receiver 1 queue %.0f, 2 queues %.0f fps (×%.3f)",
			s, len(one.gen), med(one.gen), med(two.gen), med(two.gen)/med(one.gen), med(one.rcv), med(two.rcv), med(two.rcv)/med(one.rcv))
	}
}
