//go:build linux

package trials

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// The tests in this file are benchmarks against peer tools on the lab; they
// run only with RFC2544_BENCH=1 (internal/bench/bench.sh sets it) and under
// the lab lock (/tmp/rfc2544-lab.lock).
func benchOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("RFC2544_BENCH") != "1" {
		t.Skip("benchmark against peer tools: set RFC2544_BENCH=1 (internal/bench/bench.sh does)")
	}
}

// fwdRate runs fn while sampling the DUT's B-side transmit counter over a
// window starting warm after fn starts; it returns frames/s forwarded.
func fwdRate(t *testing.T, st *lab.State, warm, window time.Duration, fn func() error) float64 {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	time.Sleep(warm)
	c0, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(window)
	c1, err := st.DUTCounters()
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(t0)
	if err := <-errc; err != nil {
		t.Fatalf("generator: %v", err)
	}
	return float64(c1.DutB.TxPackets-c0.DutB.TxPackets) / el.Seconds()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestBenchForward compares, in the same lab and interleaved, the rate the
// lab's kernel DUT forwards at 64 bytes when fed by the engine (a full
// trial: generator and receiver), by trafgen (TX ring, one CPU) and by
// iperf3 (-u -l 18 -b 0).
func TestBenchForward(t *testing.T) {
	benchOnly(t)
	for _, tool := range []string{"trafgen", "iperf3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: apt-get install -y netsniff-ng iperf3", tool)
		}
	}
	frame := 64
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_FRAME")); err == nil {
		frame = v
	}
	// No RPS: as in peers.sh, the DUT forwards on the sender's CPU
	// (trafgen's TX ring aborts when frames are freed on another CPU).
	st := labtest.New(t, lab.Config{NoRPS: true})
	cfg0 := portsOf(st)
	cfg0.TxCPU, _ = strconv.Atoi(os.Getenv("RFC2544_BENCH_TXCPU"))
	cfg0.RxCPU, _ = strconv.Atoi(os.Getenv("RFC2544_BENCH_RXCPU"))
	e := openEngine(t, cfg0)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "trafgen.cfg")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("{ eth(da=%s, sa=%s, type=0x0800), ipv4(sa=%s, da=%s, ttl=64, df), udp(sp=49184, dp=7), fill(0x00, %d) }\n",
		e.DUTMAC(0), st.A.MAC, st.A.IPv4.Addr(), st.B.IPv4.Addr(), frame-46)), 0o644); err != nil {
		t.Fatal(err)
	}
	const secs = 4
	warm, window := 1500*time.Millisecond, 2*time.Second
	reps := 3
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_REPS")); err == nil && v > 0 {
		reps = v
	}
	// flushDUT makes the DUT forget its neighbours, so a peer tool runs as
	// it would alone: the DUT learns port B's interface MAC from B's
	// kernel. The engine re-teaches its own (emulated) MAC by learning.
	flushDUT := func() {
		if out, err := exec.Command("ip", "-n", st.DUTNamespace, "neigh", "flush", "all").CombinedOutput(); err != nil {
			t.Fatalf("flush DUT neighbours: %v %s", err, out)
		}
	}
	trafgen := func() error {
		cmd := exec.Command("ip", "netns", "exec", st.A.Namespace, "taskset", "-c", "0", "timeout", "-s", "INT", strconv.Itoa(secs),
			"trafgen", "-o", st.A.Interface, "-i", cfg, "-P", "1", "--no-sock-mem", "-Q")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 124 || err == nil {
			return nil
		}
		return fmt.Errorf("trafgen: %v: %s", err, out)
	}
	var eng, engOwn, tg, tgSame, i3 []float64
	for rep := 0; rep < reps; rep++ {
		var r Result
		eng = append(eng, fwdRate(t, st, warm, window, func() error {
			var err error
			r, err = e.run(context.Background(), Spec{FrameSize: frame, Streams: []Stream{{ID: 1, Direction: AtoB}},
				Duration: secs * time.Second, Settle: 300 * time.Millisecond, Learning: 50 * time.Millisecond}, true)
			return err
		}))
		s := r.Streams[0]
		engOwn = append(engOwn, float64(s.Received)/s.TxSeconds)
		t.Logf("rep %d engine: dut fwd %.0f fps; engine sent %d (%.0f fps) received %d (%.0f fps) kdrops %d",
			rep, eng[rep], s.Sent, s.OfferedFPS, s.Received, engOwn[rep], s.KernelDrops)
		tgSame = append(tgSame, fwdRate(t, st, warm, window, trafgen))
		t.Logf("rep %d trafgen (DUT neighbour as the engine left it): dut fwd %.0f fps", rep, tgSame[rep])
		flushDUT()
		tg = append(tg, fwdRate(t, st, warm, window, trafgen))
		t.Logf("rep %d trafgen: dut fwd %.0f fps", rep, tg[rep])
		srv := exec.Command("ip", "netns", "exec", st.B.Namespace, "taskset", "-c", "1", "iperf3", "-s", "-1", "-B", st.B.IPv4.Addr().String())
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		i3 = append(i3, fwdRate(t, st, warm, window, func() error {
			cmd := exec.Command("ip", "netns", "exec", st.A.Namespace, "taskset", "-c", "0", "iperf3", "-c", st.B.IPv4.Addr().String(),
				"-u", "-l", strconv.Itoa(frame-46), "-b", "0", "-t", strconv.Itoa(secs))
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("iperf3: %v: %s", err, out)
			}
			return nil
		}))
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
		t.Logf("rep %d iperf3: dut fwd %.0f fps", rep, i3[rep])
		flushDUT()
	}
	me, mt, mi, ms := median(eng), median(tg), median(i3), median(tgSame)
	t.Logf("BENCH fwd %d bytes, medians of %d: engine %.0f fps (engine's own count %.0f), trafgen %.0f (%.0f with the engine's DUT neighbour), iperf3 %.0f; engine/trafgen %.3f (%.3f), engine/iperf3 %.3f",
		frame, reps, me, median(engOwn), mt, ms, mi, me/mt, me/ms, me/mi)
	if me == 0 || mt == 0 || mi == 0 {
		t.Errorf("a tool forwarded nothing")
	}
}

// TestBenchLongTrialRSS runs a long trial at the generator's full speed
// (RFC2544_BENCH_SECS, default 60 s) and checks the process stays under
// 100 MB of resident memory: nothing is stored per frame.
func TestBenchLongTrialRSS(t *testing.T) {
	benchOnly(t)
	secs := 60
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_SECS")); err == nil && v > 0 {
		secs = v
	}
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop})
	e := openEngine(t, portsOf(st))
	r, err := e.run(context.Background(), Spec{FrameSize: 64, Streams: []Stream{{ID: 1, Direction: AtoB}},
		Duration: time.Duration(secs) * time.Second, Settle: 300 * time.Millisecond}, true)
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	rssMB := float64(ru.Maxrss) / 1024
	s := r.Streams[0]
	t.Logf("BENCH rss %d s trial at full speed: sent %d (%.0f fps) received %d, max RSS %.1f MB", secs, s.Sent, s.OfferedFPS, s.Received, rssMB)
	if rssMB >= 100 {
		t.Errorf("max RSS %.1f MB, want < 100 MB", rssMB)
	}
	if s.Sent == 0 {
		t.Errorf("nothing sent")
	}
}
