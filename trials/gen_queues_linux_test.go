//go:build linux

package trials_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/internal/afxdp"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// TestGenerateQueues: the generator-only mode (rfc2544 gen) with two
// sending threads, each with its own socket, raw and xdp, on a loop lab
// whose veths have two queues: at a rate drawn at test time, the queues
// together send exactly the frames a 1 s run plans, and every one reaches
// the other end (its veth's receive counter);
// and more queues than the interface has are refused, naming them.
func TestGenerateQueues(t *testing.T) {
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x9e4))
	fps := float64(int(20e3 + rng.Float64()*180e3))
	t.Logf("seed %d: %.0f fps", seed, fps)
	st := labtest.New(t, lab.Config{Topology: lab.TopologyLoop, Queues: 2})
	rx := func() uint64 {
		t.Helper()
		ns, err := netns.GetFromName(st.B.Namespace)
		if err != nil {
			t.Fatal(err)
		}
		defer ns.Close()
		h, err := netlink.NewHandleAt(ns)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		l, err := h.LinkByName(st.B.Interface)
		if err != nil {
			t.Fatal(err)
		}
		return l.Attrs().Statistics.RxPackets
	}
	cfg := trials.GenConfig{Namespace: st.A.Namespace, Interface: st.A.Interface, DstMAC: st.A.PeerMAC,
		SrcIP: st.A.IPv4.Addr(), DstIP: st.B.IPv4.Addr(), FrameSize: 64, RateFPS: fps, Duration: time.Second, Queues: 2}
	for _, tr := range []struct {
		name string
		gen  func(context.Context, trials.GenConfig) (trials.GenResult, error)
	}{{"raw", trials.Generate}, {"xdp", trials.GenerateXDP}} {
		r0 := rx()
		res, err := tr.gen(context.Background(), cfg)
		if tr.name == "xdp" && errors.Is(err, afxdp.ErrNotSupported) {
			t.Skipf("AF_XDP cannot run here: %v", err)
		}
		if err != nil {
			t.Fatalf("%s: %v", tr.name, err)
		}
		got := rx() - r0
		t.Logf("%s: %d queues sent %d (failed %d) in %.4f s = %.1f fps; the far end received %d", tr.name, res.Queues, res.Sent, res.Failed,
			res.Seconds, res.OfferedFPS, got)
		// Every frame planned is sent, unless a stall of this host held a
		// raw queue's thread past its hard stop (1 % + 10 ms after the
		// plan's end): then the run lasted its whole plan. The rate's
		// accuracy is internal/bench's pacing part.
		cut := tr.name == "raw" && res.Sent < uint64(fps) && res.Seconds >= 1
		if res.Queues != 2 || res.Failed != 0 || res.Sent > uint64(fps) || res.Sent != uint64(fps) && !cut {
			t.Errorf("%s: %d queues sent %d in %.4f s (failed %d), want 2 queues, %d frames", tr.name, res.Queues,
				res.Sent, res.Seconds, res.Failed, uint64(fps))
		}
		// The far end also sees the neighbour and router traffic of its
		// interface (a few frames).
		if got < res.Sent || got > res.Sent+10 {
			t.Errorf("%s: the far end received %d frames of the %d sent", tr.name, got, res.Sent)
		}
	}
	// The veths have two queues: three are refused before anything is
	// sent (the CPU check comes first on a 2-CPU host; either names them).
	cfg.Queues = 3
	_, err := trials.GenerateXDP(context.Background(), cfg)
	t.Logf("3 queues: %v", err)
	if err == nil || !strings.Contains(err.Error(), "queues") || !strings.Contains(err.Error(), "3") {
		t.Errorf("xdp with 3 queues on 2-queue veths: %v, want an error naming the queues", err)
	}
}
