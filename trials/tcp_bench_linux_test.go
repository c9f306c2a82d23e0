//go:build linux

package trials_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials/trialstest"
)

// TestBenchTCPIperf3 puts the RFC 6349 transfer beside iperf3 on the same
// lab in the same run (issue 16): the relay DUT shaped to R (20–100
// Mbit/s) with a one-way delay D (5–15 ms), both drawn at test time; our
// transfer with windows sized from the BDP, then iperf3 with the same
// window (-w) and connections (-P) for the same time. Their receivers'
// throughputs must be within ±3 %. A peer-tool comparison: RFC2544_BENCH=1
// only (internal/bench/bench.sh --parts tcp), iperf3 from Debian.
func TestBenchTCPIperf3(t *testing.T) {
	if os.Getenv("RFC2544_BENCH") != "1" {
		t.Skip("benchmark against peer tools: set RFC2544_BENCH=1 (internal/bench/bench.sh does)")
	}
	iperf3, err := exec.LookPath("iperf3")
	if err != nil {
		t.Fatalf("iperf3 is not installed (apt-get install iperf3): %v", err)
	}
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 3))
	const secs = 8
	t.Logf("seed %d: %d s transfers", seed, secs)
	st, rateBps, _ := trialstest.RelayTCPLab(t, rng)
	pair := trialstest.TCPPairOf(st)
	a, b := pair.Base.Sender, pair.Base.Receiver
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan := rfc2544.TCPPlan{BottleneckBps: float64(rateBps), OverheadBytes: rfc2544.LabShaperOverhead, Duration: rfc2544.Duration(secs * time.Second)}
	res, err := rfc2544.RunTCPTest(ctx, pair, plan)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rfc2544 tcp: window %d × %d (%s): %.3f Mbit/s = %.1f %% of the maximum %.3f Mbit/s, TTR %.3f, buffer delay %.1f %%",
		res.WindowBytes, res.Streams, res.WindowSource, res.ThroughputBps/1e6, res.PercentOfMax, res.MaxBps/1e6, res.TransferTimeRatio, res.BufferDelayPercent)

	// iperf3 with the same window and connections, server in B.
	port := strconv.Itoa(5201 + rng.IntN(100))
	srv := exec.Command("ip", "netns", "exec", b.Namespace, iperf3, "-s", "-1", "-B", b.Addr.String(), "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	var out []byte
	for try := 0; ; try++ {
		// The server needs a moment to listen; a refused connect is
		// tried again for up to 2 s.
		c := exec.CommandContext(ctx, "ip", "netns", "exec", a.Namespace, iperf3, "-c", b.Addr.String(), "-p", port,
			"-B", a.Addr.String(), "-w", strconv.Itoa(res.WindowBytes), "-P", strconv.Itoa(res.Streams), "-t", strconv.Itoa(secs), "-J")
		out, err = c.Output()
		if err == nil || try >= 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("iperf3 client: %v\n%s", err, out)
	}
	var rep struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			SumSent struct {
				Retransmits int `json:"retransmits"`
			} `json:"sum_sent"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &rep); err != nil || rep.End.SumReceived.BitsPerSecond <= 0 {
		t.Fatalf("iperf3 -J: %v (%d bytes)", err, len(out))
	}
	ip := rep.End.SumReceived.BitsPerSecond
	ratio := res.ThroughputBps / ip
	t.Logf("iperf3 -w %d -P %d -t %d: %.3f Mbit/s at its receiver, %d retransmits; rfc2544/iperf3 = %.4f", res.WindowBytes, res.Streams, secs,
		ip/1e6, rep.End.SumSent.Retransmits, ratio)
	if ratio < 0.97 || ratio > 1.03 {
		t.Errorf("rfc2544 tcp %.3f Mbit/s vs iperf3 %.3f Mbit/s: %.2f %% apart, want within ±3 %%", res.ThroughputBps/1e6, ip/1e6, 100*(ratio-1))
	}
}
