//go:build linux

package trials_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestXDPSearchAccuracy: the quick profile's throughput search over the xdp
// transport, through a DUT shaped (lab defaults) to a rate R drawn now
// (20–150 Mbit/s, 512 or 1518 B; RFC2544_SEED replays), finds R within
// −3 % … +1 %, not tester-limited.
func TestXDPSearchAccuracy(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RFC2544_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RFC2544_SEED=%q: want a decimal seed", s)
		}
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 0x2544))
	f := []int{512, 1518}[rng.IntN(2)]
	rateBps := uint64(20e6+rng.Float64()*130e6) / 1000 * 1000
	want := float64(rateBps) / (8 * float64(f-4))
	t.Logf("seed %d: %d B through a DUT shaped to %d bit/s: R = %.0f fps", seed, f, rateBps, want)
	st := labtest.New(t, lab.Config{AtoB: lab.Shaping{RateBps: rateBps}})
	pc := func(p lab.Port) trials.PortConfig {
		return trials.PortConfig{Namespace: p.Namespace, Interface: p.Interface, Addr: p.IPv4, Gateway: p.GatewayV4}
	}
	tc := trials.Config{A: pc(st.A), B: pc(st.B)}
	for c := range runtime.NumCPU() {
		if len(st.DUTCPUs) > 0 && !slices.Contains(st.DUTCPUs, c) {
			tc.TxCPU = c + 1
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := trials.OpenXDP(ctx, tc)
	if errors.Is(err, afxdp.ErrNotSupported) {
		t.Skipf("AF_XDP cannot run here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.LinkBps, plan.NoProbe = []rfc2544.Test{rfc2544.TestThroughput}, []int{f}, 1e9, true
	r := &rfc2544.Runner{Tester: e, Plan: plan}
	res, err := r.Throughput(ctx, f)
	if err != nil {
		t.Fatalf("throughput %d B: %v", f, err)
	}
	for _, tr := range res.Trials {
		t.Logf("trial %d (%s, %.2g s): intended %.0f offered %.0f fps (%.2f%% of R), loss %.3f%%, %v %s%s", tr.Step, tr.Goal, tr.DurationS,
			tr.IntendedFPS, tr.OfferedFPS, 100*tr.OfferedFPS/want, tr.LossPercent, tr.Outcome, tr.TesterLimitReason, tr.FailReason)
	}
	t.Logf("%d B: throughput %.0f fps = %.2f%% of R, found %v, tester-limited %v %s", f, res.FPS, 100*res.FPS/want, res.Found, res.TesterLimited, res.TesterLimitReason)
	if !res.Found || res.TesterLimited || res.FPS < 0.97*want || res.FPS > 1.01*want {
		t.Errorf("%d B at R = %d bit/s: throughput %.0f fps (%.2f%% of R; found %v, tester-limited %v), want %.0f … %.0f fps (−3 %% … +1 %% of R)",
			f, rateBps, res.FPS, 100*res.FPS/want, res.Found, res.TesterLimited, 0.97*want, 1.01*want)
	}
}
