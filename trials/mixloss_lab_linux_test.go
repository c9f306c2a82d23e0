//go:build linux

package trials_test

import (
	"context"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/lab"
	"github.com/rfc2544/rfc2544/lab/labtest"
	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
	"github.com/vishvananda/netns"
)

// TestMixLossAttribution is issue 16's per-size loss attribution on the
// lab: a kernel DUT with an nftables rule that drops the IP packets of one
// length only (meta length = that frame size − 18) forwards a custom mix of
// three sizes drawn at test time (one of 64–299 B, one of 300–999 B, one of
// 1000–1518 B, weights 1–8, the dropped size drawn among them). On the raw,
// udp and xdp transports, a trial of the mix at a modest rate (10,000
// frames/s, far below what the DUT forwards) loses every frame of the
// dropped size and none of the others, per size (StreamResult.Sizes, each
// received size with its own latency); the
// DUT's rule counted exactly the frames of that size sent (and the udp
// engine's learning datagram when that size is the largest). The frame loss
// procedure on the same mix carries the same attribution in its points
// (FrameLossPoint.Sizes). RFC2544_SEED=N replays a draw.
func TestMixLossAttribution(t *testing.T) {
	seed := testseed.Seed(t, "./trials")
	rng := rand.New(rand.NewPCG(seed, 0x1616))
	parts := []framing.MixPart{
		{Size: 64 + rng.IntN(236), Weight: 1 + rng.IntN(8)},
		{Size: 300 + rng.IntN(700), Weight: 1 + rng.IntN(8)},
		{Size: 1000 + rng.IntN(519), Weight: 1 + rng.IntN(8)},
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	drop := parts[rng.IntN(len(parts))].Size
	code, err := framing.ParseSize(framing.InlineMixName(parts))
	if err != nil {
		t.Fatal(err)
	}
	mix, _ := framing.MixOf(code)
	t.Logf("mix %s (mean %.1f B); the DUT drops the %d B frames (IP length %d)", mix.Name, mix.MeanSize(), drop, drop-18)

	st := labtest.New(t, lab.Config{})
	dropped := dropLength(t, st.DUTNamespace, drop-18)
	udp, raw := labTesters(t, st)

	const rate = 10000
	spec := trials.Spec{FrameSize: code, Streams: []trials.Stream{{ID: 1, Direction: trials.AtoB}},
		RateFPS: rate, Duration: time.Second, Settle: 500 * time.Millisecond, Learning: 100 * time.Millisecond}
	type transport struct {
		name string
		e    rfc2544.Tester
	}
	check := func(tc transport) {
		var r trials.Result
		var ruleDrops uint64
		for try := 0; ; try++ {
			before := dropped()
			var err error
			if r, err = tc.e.Run(context.Background(), spec); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			ruleDrops = dropped() - before
			logResult(t, tc.name+" mix", r)
			// A stall of this host (the engine marks it transient) runs
			// the trial again, at most twice.
			if !r.TesterLimitTransient || try == 2 {
				break
			}
		}
		s := r.Streams[0]
		t.Logf("%s per size: %+v; the DUT's rule dropped %d", tc.name, s.Sizes, ruleDrops)
		if r.TesterLimited {
			t.Errorf("%s: tester-limited at %d frames/s (%s): the attribution below is not the DUT's alone", tc.name, rate, r.TesterLimitReason)
		}
		checkAttribution(t, tc.name, mix, drop, s.Sizes, s.Sent, s.Received)
		// Besides the test frames, the udp engine sends one unsigned
		// learning datagram per flow, of the largest frame's size
		// (UDPEngine.ready); raw learns by ARP, which is not IP.
		learning := uint64(0)
		if tc.name == "udp" && drop == mix.Largest() {
			learning = 1
		}
		for _, c := range s.Sizes {
			// Each size timed on its own: its received frames, within
			// the stream's latency; none for the size the DUT dropped.
			switch l := c.Latency; {
			case c.Received == 0 && l != nil:
				t.Errorf("%s: %d B: nothing received, latency %+v", tc.name, c.FrameSize, *l)
			case c.Received > 0 && (l == nil || l.Count != c.Received || l.MinNs < s.Latency.MinNs || l.MaxNs > s.Latency.MaxNs || l.MinNs <= 0):
				t.Errorf("%s: %d B: %d received, latency %+v; want as many timed, within the stream's %d … %d ns", tc.name, c.FrameSize, c.Received, l,
					s.Latency.MinNs, s.Latency.MaxNs)
			case l != nil:
				t.Logf("%s: %d B: latency min %d mean %.0f max %d ns over %d frames", tc.name, c.FrameSize, l.MinNs, l.MeanNs, l.MaxNs, l.Count)
			}
			if c.FrameSize == drop && c.Sent+learning != ruleDrops {
				t.Errorf("%s: %d frames of %d B sent (and %d learning datagrams), the DUT's rule dropped %d: the tester's count and the DUT's differ",
					tc.name, c.Sent, drop, learning, ruleDrops)
			}
		}
	}
	check(transport{"raw", raw})
	check(transport{"udp", udp})

	// The frame loss procedure (RFC 2544 §26.3) on the mix, its line rate
	// set so that 100 % is the same modest rate: every point attributes
	// the loss to the dropped size.
	plan, err := rfc2544.DefaultPlan(rfc2544.ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	plan.Tests, plan.FrameSizes, plan.NoProbe = []rfc2544.Test{rfc2544.TestFrameLoss}, []int{code}, true
	plan.LinkBps = rate * (mix.MeanSize() + framing.L1Overhead) * 8
	plan.FrameLoss.StepPercent = 50
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := (&rfc2544.Runner{Tester: raw, Plan: plan}).Run(ctx)
	if err != nil {
		t.Fatalf("frame loss: %v", err)
	}
	if len(res.FrameLoss) != 1 || len(res.FrameLoss[0].Points) == 0 {
		t.Fatalf("frame loss results %+v: want one size with points", res.FrameLoss)
	}
	if len(res.Plan.Mixes) != 1 || res.Plan.Mixes[0].Name != mix.Name {
		t.Errorf("results' plan mixes %+v: want %s defined", res.Plan.Mixes, mix.Name)
	}
	for _, p := range res.FrameLoss[0].Points {
		t.Logf("frame loss at %.0f %% (%.0f fps): loss %.3f %%, per size %+v", p.IntendedPercent, p.OfferedFPS, p.LossPercent, p.Sizes)
		var counts []trials.SizeCount
		for _, l := range p.Sizes {
			counts = append(counts, trials.SizeCount{FrameSize: l.FrameSize, Sent: l.Sent, Received: l.Received})
			want := 0.0
			if l.FrameSize == drop {
				want = 100
			}
			if l.LossPercent != want && !p.TesterLimited {
				t.Errorf("frame loss at %.0f %%: %d B lost %.3f %%, want %g", p.IntendedPercent, l.FrameSize, l.LossPercent, want)
			}
		}
		checkAttribution(t, "frame loss", mix, drop, counts, p.Sent, p.Received)
	}

	// The xdp transport last: its XDP program takes the test frames from
	// the raw receiver while it is open.
	check(transport{"xdp", labXDP(t, st)})
}

// checkAttribution checks a mix trial's per-size counts: every size of the
// mix once, the dropped size sent and all lost, every other size all
// received, and the sizes adding up to the stream's totals.
func checkAttribution(t *testing.T, name string, mix framing.Mix, drop int, sizes []trials.SizeCount, sent, received uint64) {
	t.Helper()
	if len(sizes) != len(mix.Parts) {
		t.Fatalf("%s: per-size counts %+v, want one per size of %s", name, sizes, mix.Name)
	}
	var s, r uint64
	for _, c := range sizes {
		if !slices.ContainsFunc(mix.Parts, func(p framing.MixPart) bool { return p.Size == c.FrameSize }) {
			t.Errorf("%s: counts for %d B, not a size of %s", name, c.FrameSize, mix.Name)
		}
		s += c.Sent
		r += c.Received
		switch {
		case c.Sent == 0:
			t.Errorf("%s: no frame of %d B sent", name, c.FrameSize)
		case c.FrameSize == drop && c.Received != 0:
			t.Errorf("%s: %d of %d frames of the dropped size %d B received; want 0 (all lost)", name, c.Received, c.Sent, c.FrameSize)
		case c.FrameSize != drop && c.Received != c.Sent:
			t.Errorf("%s: %d B: %d of %d frames received; want all (the DUT drops only %d B)", name, c.FrameSize, c.Received, c.Sent, drop)
		}
	}
	if s != sent || r != received {
		t.Errorf("%s: sizes add up to %d sent, %d received; the totals are %d, %d", name, s, r, sent, received)
	}
}

// dropLength adds to the DUT's namespace an nftables forward chain of its
// own (table inet mixdrop, before the lab's filter) that counts and drops
// the packets of IP length ipLen; it returns a reader of that counter.
func dropLength(t *testing.T, ns string, ipLen int) (dropped func() uint64) {
	t.Helper()
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatalf("DUT namespace %s: %v", ns, err)
	}
	t.Cleanup(func() { h.Close() })
	conn, err := nftables.New(nftables.WithNetNSFd(int(h)))
	if err != nil {
		t.Fatalf("nftables in %s: %v", ns, err)
	}
	tbl := conn.AddTable(&nftables.Table{Name: "mixdrop", Family: nftables.TableFamilyINet})
	policy := nftables.ChainPolicyAccept
	ch := conn.AddChain(&nftables.Chain{Name: "forward", Table: tbl, Type: nftables.ChainTypeFilter,
		Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityFilter - 10), Policy: &policy})
	conn.AddRule(&nftables.Rule{Table: tbl, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyLEN, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.NativeEndian.PutUint32(uint32(ipLen))},
		&expr.Counter{},
		&expr.Verdict{Kind: expr.VerdictDrop},
	}})
	if err := conn.Flush(); err != nil {
		t.Fatalf("nftables rule dropping IP length %d in %s: %v", ipLen, ns, err)
	}
	return func() uint64 {
		rules, err := conn.GetRules(tbl, ch)
		if err != nil {
			t.Fatalf("read the drop rule's counter: %v", err)
		}
		for _, r := range rules {
			for _, e := range r.Exprs {
				if c, ok := e.(*expr.Counter); ok {
					return c.Packets
				}
			}
		}
		t.Fatalf("the drop rule has no counter")
		return 0
	}
}
