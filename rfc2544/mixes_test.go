package rfc2544

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/internal/testseed"
	"github.com/rfc2544/rfc2544/trials"
)

const minePlan = `
mixes:
  - name: mine
    parts:
      - {frame_size: 64, weight: 5}
      - {frame_size: 1000, weight: 2}
frame_sizes: [64, mine, mix:128x3,1518x1, "mix:256x1", 1518]
`

// A plan file defines a mix and lists it by name, next to a mix written in
// place (whose commas YAML splits: joined again); the plan's YAML names
// both and reads back the same.
func TestPlanCustomMixes(t *testing.T) {
	base := testPlan(nil)
	p, _, err := ParsePlan("plan.yaml", []byte(minePlan), base)
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	mine := framing.Mix{Name: "mine", Parts: []framing.MixPart{{Size: 64, Weight: 5}, {Size: 1000, Weight: 2}}}
	inline, err := framing.ParseMix("mix:128x3,1518x1")
	if err != nil {
		t.Fatal(err)
	}
	single, _ := framing.ParseMix("mix:256x1")
	want := []int{64, framing.MixCode(mine), framing.MixCode(inline), framing.MixCode(single), 1518}
	if !slices.Equal(p.FrameSizes, want) {
		t.Fatalf("frame_sizes %v, want %v", p.FrameSizes, want)
	}
	if diff := cmp.Diff([]framing.Mix{mine, inline, single}, p.Mixes); diff != "" {
		t.Errorf("mixes (-want +got):\n%s", diff)
	}
	if got := framing.SizeName(p.FrameSizes[1]); got != "mine" {
		t.Errorf("SizeName = %q, want mine", got)
	}
	y, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "- mine\n") || !strings.Contains(string(y), "mix:128x3,1518x1") {
		t.Errorf("plan YAML does not name the mixes:\n%s", y)
	}
	back, _, err := ParsePlan("again.yaml", y, base)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if !slices.Equal(back.FrameSizes, p.FrameSizes) || !cmp.Equal(back.Mixes, p.Mixes) {
		t.Errorf("round trip: %v %+v, want %v %+v", back.FrameSizes, back.Mixes, p.FrameSizes, p.Mixes)
	}
	// JSON (results embed the plan) carries the definitions.
	j, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"mixes":[{"name":"mine","parts":[{"frame_size":64,"weight":5}`) {
		t.Errorf("plan JSON lacks the mixes: %s", j)
	}
}

// Bad mixes are refused before any traffic, naming the field and the fix.
func TestPlanBadMixes(t *testing.T) {
	base := testPlan(nil)
	for _, tc := range []struct {
		name, plan, want string
	}{
		{"weight 0", "mixes: [{name: m, parts: [{frame_size: 64, weight: 0}]}]\nframe_sizes: [m]", "mixes[0]"},
		{"absurd weight", "mixes: [{name: m, parts: [{frame_size: 64, weight: 100000}]}]\nframe_sizes: [m]", "weight of 1 to 1000"},
		{"too many frames", "mixes: [{name: m, parts: [{frame_size: 64, weight: 900}, {frame_size: 128, weight: 900}]}]\nframe_sizes: [m]", "1800 frames per round"},
		{"no parts", "mixes: [{name: m, parts: []}]\nframe_sizes: [m]", "no frame sizes"},
		{"duplicate name", "mixes: [{name: m, parts: [{frame_size: 64, weight: 1}]}, {name: M, parts: [{frame_size: 128, weight: 1}]}]\nframe_sizes: [m]", "mixes[1].name"},
		{"built-in name", "mixes: [{name: imix, parts: [{frame_size: 64, weight: 1}]}]\nframe_sizes: [imix]", "built-in"},
		{"number name", "mixes: [{name: \"128\", parts: [{frame_size: 64, weight: 1}]}]\nframe_sizes: [64]", "a number"},
		{"unknown name", "mixes: [{name: m, parts: [{frame_size: 64, weight: 1}]}]\nframe_sizes: [n]", "frame_sizes[0]"},
		{"unknown field", "mixes: [{name: m, parts: [{size: 64, weight: 1}]}]\nframe_sizes: [m]", "known fields: frame_size, weight"},
		{"too many parts", "frame_sizes: [\"mix:" + strings.TrimSuffix(strings.Repeat("64x1,", 17), ",") + "\"]", "at most 16"},
		{"repeated size", "frame_sizes: [mix:64x1,64x2]", "listed twice"},
		{"above jumbo", "frame_sizes: [mix:64x1,9300x1]", "frame size 9300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParsePlan("plan.yaml", []byte(tc.plan), base)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParsePlan = %v, want an error with %q", err, tc.want)
			}
			t.Logf("%v", err)
		})
	}
	// Sizes the IP version cannot carry: Validate, naming the mix.
	p, _, err := ParsePlan("plan.yaml", []byte("ipv6: true\n"+strings.Replace(minePlan, "[64, mine,", "[mine,", 1)), base)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "mine") || !strings.Contains(err.Error(), "84") {
		t.Errorf("mine (64 B) with IPv6: %v, want an error naming the mix and the 84-byte minimum", err)
	}
	// A Go plan listing a custom code without defining it.
	code, err := framing.RegisterMix(framing.Mix{Name: "undefined-here", Parts: []framing.MixPart{{Size: 100, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	q := testPlan(nil, 64, code)
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "define it under mixes") {
		t.Errorf("undefined custom code: %v", err)
	}
	if err := q.WithDefaults().Validate(); err != nil {
		t.Errorf("WithDefaults defines a registered mix: %v", err)
	}
	q.FrameSizes = []int{64, framing.MaxCustomMixCode - 12345}
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "frame_sizes") {
		t.Errorf("unregistered custom code: %v", err)
	}
}

// --sizes takes a mix written in place among the sizes (its commas do not
// split the list) and the plan file's mixes by name; the plan then defines
// the mix written in place.
func TestPlanFlagsMix(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddPlanFlags(fs, true)
	if err := fs.Parse([]string{"--sizes", "64, mix:64x7,570x4, 1518x1,mine,imix,1518"}); err != nil {
		t.Fatal(err)
	}
	p, _, err := ParsePlan("plan.yaml", []byte(minePlan), testPlan(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Apply(&p, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(p.FrameSizes))
	for i, s := range p.FrameSizes {
		names[i] = framing.SizeName(s)
	}
	if want := []string{"64", "mix:64x7,570x4,1518x1", "mine", "imix", "1518"}; !slices.Equal(names, want) {
		t.Errorf("sizes %v, want %v", names, want)
	}
	if p.mixIndex(p.FrameSizes[1]) < 0 {
		t.Errorf("mixes %+v lack the mix written in place", p.Mixes)
	}
	for _, bad := range []struct{ in, want string }{
		{"64,mix:64x0", "weight 0"},
		{"64,mix:64x-1", "weight -1"},
		{"64,yours", "mine"},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		f := AddPlanFlags(fs, true)
		fs.Parse([]string{"--sizes", bad.in})
		q := p
		if err := f.Apply(&q, nil); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "--sizes") {
			t.Errorf("--sizes %s: %v, want an error naming --sizes and %q", bad.in, err, bad.want)
		}
	}
}

// A custom mix drawn at test time runs through a simulated DUT of capacity
// R like imix: throughput R in bits/s of the mix's mean frame.
func TestRunCustomMixSim(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 2))
	var parts []framing.MixPart
	for _, s := range rng.Perm(10)[:1+rng.IntN(4)] {
		parts = append(parts, framing.MixPart{Size: 64 + 140*s, Weight: 1 + rng.IntN(20)})
	}
	capPct := 20 + 70*rng.Float64()
	spec := framing.InlineMixName(parts)
	t.Logf("%s, capacity %.2f %% of 1 Gbit/s", spec, capPct)
	sizes, err := ParseFrameSizes(spec)
	if err != nil {
		t.Fatal(err)
	}
	p := testPlan([]Test{TestThroughput}, sizes...)
	res, err := (&Runner{Tester: &SimDUT{LinkBps: testLink, CapacityBps: capPct / 100 * testLink}, Plan: p, Sleep: noSleep}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Mixes) != 1 || res.Plan.Mixes[0].Name != spec {
		t.Errorf("results' plan mixes %+v, want %s defined", res.Plan.Mixes, spec)
	}
	tr := res.Throughput[0]
	R := capPct / 100 * testLink
	if !tr.Found || tr.L1Bps > R*(1+1e-9) || tr.L1Bps < R*0.99 {
		t.Errorf("%s: throughput %.4g bit/s L1 (found %v), want within -1 %%…0 of R %.4g", spec, tr.L1Bps, tr.Found, R)
	}
	m, _ := framing.MixOf(sizes[0])
	if want := tr.FPS * (m.MeanSize() + 20) * 8; math.Abs(tr.L1Bps-want) > 1e-6*want {
		t.Errorf("L1 %.6g, want fps × (F̄+20) × 8 = %.6g", tr.L1Bps, want)
	}
}

func TestSizeLosses(t *testing.T) {
	r := trials.Result{Streams: []trials.StreamResult{
		{Sizes: []trials.SizeCount{{FrameSize: 64, Sent: 700, Received: 700}, {FrameSize: 570, Sent: 400, Received: 0}, {FrameSize: 1518, Sent: 100, Received: 99}}},
		{Sizes: []trials.SizeCount{{FrameSize: 64, Sent: 700, Received: 690}, {FrameSize: 570, Sent: 400, Received: 0}, {FrameSize: 1518, Sent: 100, Received: 101}}},
	}}
	want := []SizeLoss{
		{FrameSize: 64, Sent: 1400, Received: 1390, LossPercent: 1000.0 / 1400},
		{FrameSize: 570, Sent: 800, Received: 0, LossPercent: 100},
		{FrameSize: 1518, Sent: 200, Received: 199, LossPercent: 0.5},
	}
	if diff := cmp.Diff(want, SizeLosses(r)); diff != "" {
		t.Errorf("SizeLosses (-want +got):\n%s", diff)
	}
	if got := SizeLosses(trials.Result{Streams: []trials.StreamResult{{Sent: 5}}}); got != nil {
		t.Errorf("one size: %v, want nil", got)
	}
}

// TestSizeLatencies: each size's latency merged over streams and trials,
// in the order the sizes first appear; a size no stream timed is left out.
func TestSizeLatencies(t *testing.T) {
	l := func(n uint64, lo, mean, hi, p99 int64) *trials.LatencySummary {
		return &trials.LatencySummary{Count: n, MinNs: lo, MeanNs: float64(mean), MaxNs: hi, P99Ns: p99}
	}
	rs := []trials.Result{
		{Streams: []trials.StreamResult{
			{Sizes: []trials.SizeCount{{FrameSize: 570, Latency: l(4, 20, 25, 30, 30)}, {FrameSize: 64, Latency: l(7, 10, 11, 12, 12)}, {FrameSize: 1518}}},
			{Sizes: []trials.SizeCount{{FrameSize: 570, Latency: l(4, 18, 23, 40, 40)}, {FrameSize: 64, Latency: l(7, 9, 13, 14, 14)}}},
		}},
		{Streams: []trials.StreamResult{{Sizes: []trials.SizeCount{{FrameSize: 64, Latency: l(14, 11, 12, 13, 13)}}}}},
	}
	got := sizeLatencies(rs)
	if len(got) != 2 || got[0].FrameSize != 570 || got[1].FrameSize != 64 {
		t.Fatalf("sizes %+v, want 570 then 64 (1518 was not timed)", got)
	}
	for _, c := range []struct {
		got         trials.LatencySummary
		n           uint64
		lo, hi, p99 int64
		mean        float64
	}{
		{got[0].Summary, 8, 18, 40, 40, 24},
		{got[1].Summary, 28, 9, 14, 14, (7*11 + 7*13 + 14*12) / 28.0},
	} {
		if c.got.Count != c.n || c.got.MinNs != c.lo || c.got.MaxNs != c.hi || c.got.P99Ns != c.p99 || math.Abs(c.got.MeanNs-c.mean) > 1e-9 {
			t.Errorf("merged %+v, want count %d, min %d, mean %g, max %d, P99 %d (the largest: an upper bound)", c.got, c.n, c.lo, c.mean, c.hi, c.p99)
		}
	}
	if got := sizeLatencies([]trials.Result{{Streams: []trials.StreamResult{{Sent: 5}}}}); got != nil {
		t.Errorf("one size: %v, want nil", got)
	}
}

func TestSplitSizes(t *testing.T) {
	for in, want := range map[string][]string{
		"64,128":                         {"64", "128"},
		"64, mix:64x7,570x4 ,1518x1,128": {"64", "mix:64x7,570x4,1518x1", "128"},
		"mix:64x1,mix:128x1":             {"mix:64x1", "mix:128x1"},
		"imix,64x1":                      {"imix", "64x1"},
		"64,,1":                          {"64", "", "1"},
	} {
		if got := splitSizes(in); !slices.Equal(got, want) {
			t.Errorf("splitSizes(%q) = %q, want %q", in, got, want)
		}
	}
}

// A resumed run reads its journal's plan: the custom mixes it defines are
// registered, so the journaled sizes name them; a journal whose plan lacks
// a mix its sizes use is refused.
func TestJournalRegistersMixes(t *testing.T) {
	name := fmt.Sprintf("journal%d", rand.Uint32())
	mix := framing.Mix{Name: name, Parts: []framing.MixPart{{Size: 128, Weight: 2}, {Size: 256, Weight: 1}}}
	code := framing.MixCode(mix)
	p := testPlan(nil, code)
	p.Mixes = []framing.Mix{mix}
	for _, tc := range []struct {
		name  string
		mixes []framing.Mix
		ok    bool
	}{{"without the mix", nil, false}, {"with the mix", p.Mixes, true}} {
		q := p
		q.Mixes = tc.mixes
		b, err := json.Marshal(JournalHeader{Journal: JournalVersion, Tool: "test", Plan: q})
		if err != nil {
			t.Fatal(err)
		}
		path := t.TempDir() + "/journal.jsonl"
		if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = ReadJournal(path)
		if tc.ok && err != nil || !tc.ok && (err == nil || !strings.Contains(err.Error(), "mixes")) {
			t.Fatalf("%s: ReadJournal: %v", tc.name, err)
		}
	}
	if framing.SizeName(code) != name {
		t.Errorf("after reading the journal: SizeName(%d) = %q, want %q", code, framing.SizeName(code), name)
	}
}

// The sample plan with mixes reads and validates, naming every mix.
func TestSamplePlanIMIX(t *testing.T) {
	b, err := os.ReadFile("../testdata/plans/imix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// As the CLI reads it: decoded over a complete plan, validated as is.
	p, _, err := ParsePlan("imix.yaml", b, testPlan(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.FrameSizes {
		names = append(names, framing.SizeName(s))
	}
	if want := []string{"64", "imix", "imix-csit", "small-heavy", "mix:128x3,512x2,1280x1", "1518"}; !slices.Equal(names, want) {
		t.Errorf("sizes %q, want %q", names, want)
	}
	if len(p.Mixes) != 2 {
		t.Errorf("mixes %+v: want small-heavy and the mix written in place", p.Mixes)
	}
}
