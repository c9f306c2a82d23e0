//go:build linux

package trials

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
)

// TestBenchUDPForward compares, in the same lab and interleaved, the rate
// the lab's kernel DUT forwards at 64 bytes (18-byte UDP payloads) when fed
// by the UDP transport (a full trial: sendmmsg generator and recvmmsg
// receiver), by iperf3 (-u -l 18 -b 0) and by iperf2 (-u -l 18 -b 10G).
// Senders run on CPU 0, receivers on CPU 1; the DUT forwards in the
// sender's softirq (no RPS), as in peers.sh. RFC2544_BENCH=1 only.
func TestBenchUDPForward(t *testing.T) {
	benchOnly(t)
	for _, tool := range []string{"iperf3", "iperf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: apt-get install -y iperf3 iperf", tool)
		}
	}
	frame := 64
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_FRAME")); err == nil {
		frame = v
	}
	payload := strconv.Itoa(frame - 46)
	// RFC2544_BENCH_RPS=1 keeps the lab's default: the DUT's receive
	// work steered to the last CPU.
	st := labtest.New(t, lab.Config{NoRPS: os.Getenv("RFC2544_BENCH_RPS") != "1"})
	// Sender on CPU 0 and receiver on CPU 1 (1-based in UDPConfig) unless
	// RFC2544_BENCH_TXCPU / RFC2544_BENCH_RXCPU say otherwise.
	txCPU, rxCPU := 1, 2
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_TXCPU")); err == nil {
		txCPU = v
	}
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_RXCPU")); err == nil {
		rxCPU = v
	}
	e, err := OpenUDP(context.Background(), UDPConfig{
		A:     UDPPortConfig{Namespace: st.A.Namespace, Addr: st.A.IPv4.Addr()},
		B:     UDPPortConfig{Namespace: st.B.Namespace, Addr: st.B.IPv4.Addr()},
		TxCPU: txCPU, RxCPU: rxCPU,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const secs = 4
	warm, window := 1500*time.Millisecond, 2*time.Second
	reps := 3
	if v, err := strconv.Atoi(os.Getenv("RFC2544_BENCH_REPS")); err == nil && v > 0 {
		reps = v
	}
	dst := st.B.IPv4.Addr().String()
	peer := func(name string, server []string, client []string) float64 {
		srv := exec.Command("ip", append([]string{"netns", "exec", st.B.Namespace, "taskset", "-c", "1"}, server...)...)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = srv.Process.Signal(syscall.SIGTERM)
			_ = srv.Wait()
		}()
		time.Sleep(300 * time.Millisecond)
		return fwdRate(t, st, warm, window, func() error {
			cmd := exec.Command("ip", append([]string{"netns", "exec", st.A.Namespace, "taskset", "-c", "0"}, client...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v: %s", name, err, out)
			}
			return nil
		})
	}
	var eng, engOwn, i3, i2 []float64
	for rep := 0; rep < reps; rep++ {
		var r Result
		eng = append(eng, fwdRate(t, st, warm, window, func() error {
			var err error
			r, err = e.Run(context.Background(), Spec{FrameSize: frame, Streams: []Stream{{ID: 1, Direction: AtoB}},
				RateFPS: 10e6, Duration: secs * time.Second, Settle: 300 * time.Millisecond})
			return err
		}))
		s := r.Streams[0]
		engOwn = append(engOwn, float64(s.Received)/s.TxSeconds)
		t.Logf("rep %d udp engine: dut fwd %.0f fps; sent %d (%.0f fps) received %d (%.0f fps) kdrops %d",
			rep, eng[rep], s.Sent, s.OfferedFPS, s.Received, engOwn[rep], s.KernelDrops)
		i3 = append(i3, peer("iperf3", []string{"iperf3", "-s", "-1", "-B", dst},
			[]string{"iperf3", "-c", dst, "-u", "-l", payload, "-b", "0", "-t", strconv.Itoa(secs)}))
		t.Logf("rep %d iperf3: dut fwd %.0f fps", rep, i3[rep])
		i2 = append(i2, peer("iperf2", []string{"iperf", "-s", "-u", "-B", dst},
			[]string{"iperf", "-c", dst, "-u", "-l", payload, "-b", "10G", "-t", strconv.Itoa(secs)}))
		t.Logf("rep %d iperf2: dut fwd %.0f fps", rep, i2[rep])
	}
	me, m3, m2 := median(eng), median(i3), median(i2)
	t.Logf("BENCH udp fwd %d bytes, medians of %d: udp engine %.0f fps (its own count %.0f), iperf3 %.0f, iperf2 %.0f; udp/iperf3 %.2f, udp/iperf2 %.2f",
		frame, reps, me, median(engOwn), m3, m2, me/m3, me/m2)
	if me == 0 || m3 == 0 || m2 == 0 {
		t.Errorf("a tool forwarded nothing")
	}
}
