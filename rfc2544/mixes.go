package rfc2544

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/trials"
)

// Custom frame-size mixes. A plan names its own mixes in Plan.Mixes
// (mixes: [{name: mine, parts: [{frame_size: 64, weight: 7}, ...]}]) and
// lists them by name among the sizes (frame_sizes: [64, mine]), or writes
// one in place (--sizes 64,mix:64x7,570x4,1518x1). Either way the plan's
// Mixes hold every custom mix its sizes use, so the results (which embed
// the plan) say what each mix was, and a results file read later registers
// them again (RegisterMixes) before anything reads its size codes.

// RegisterMixes checks the plan's mixes (names, parts, each name once) and
// registers them (framing.RegisterMix), so their codes in FrameSizes and in
// results resolve. Errors are *PlanError naming mixes[i] and the fix.
func (p Plan) RegisterMixes() error {
	bad := func(field string, v any, fix string) error {
		return &PlanError{Field: field, Value: v, Fix: fix}
	}
	seen := map[string]int{}
	for i, m := range p.Mixes {
		field := fmt.Sprintf("mixes[%d]", i)
		if err := framing.CheckMixName(m.Name); err != nil {
			return bad(field+".name", quote(m.Name), err.Error())
		}
		if j, ok := seen[strings.ToLower(m.Name)]; ok {
			return bad(field+".name", quote(m.Name), fmt.Sprintf("mixes[%d] has the same name; name each mix once", j))
		}
		seen[strings.ToLower(m.Name)] = i
		if err := framing.CheckMix(m); err != nil {
			return bad(field, quote(m.Name), err.Error())
		}
		if _, err := framing.RegisterMix(m); err != nil {
			return bad(field, quote(m.Name), err.Error())
		}
	}
	return nil
}

// checkMixSizes checks that every custom mix code among sizes is one of the
// plan's mixes (so the results carry its definition).
func (p Plan) checkMixSizes(field string, sizes []int) error {
	for _, f := range sizes {
		if !framing.IsCustomMixCode(f) {
			continue
		}
		if p.mixIndex(f) < 0 {
			name := fmt.Sprint(f)
			if m, ok := framing.MixOf(f); ok {
				name = m.Name
			}
			return &PlanError{Field: field, Value: name,
				Fix: "a custom mix the plan does not define; define it under mixes (name and parts) and list it by name, or write it in place as mix:64x7,570x4,1518x1"}
		}
	}
	return nil
}

// mixIndex is the index in p.Mixes of the mix of code, or -1.
func (p Plan) mixIndex(code int) int {
	return slices.IndexFunc(p.Mixes, func(m framing.Mix) bool { return framing.MixCode(m) == code })
}

// defineMixes returns p with the registered custom mixes of its frame
// sizes that p.Mixes lacks (those written in place) appended to a copy of
// p.Mixes.
func (p Plan) defineMixes() Plan {
	for _, f := range p.FrameSizes {
		if !framing.IsCustomMixCode(f) || p.mixIndex(f) >= 0 {
			continue
		}
		if m, ok := framing.MixOf(f); ok {
			p.Mixes = append(slices.Clip(p.Mixes), m)
		}
	}
	return p
}

// mixByName returns the code of the plan's mix named name (any case).
func (p Plan) mixByName(name string) (int, bool) {
	for _, m := range p.Mixes {
		if strings.EqualFold(m.Name, name) {
			return framing.MixCode(m), true
		}
	}
	return 0, false
}

// parseSizes reads a comma-separated list of sizes like ParseFrameSizes,
// also taking the names of the plan's mixes (registered first).
func (p Plan) parseSizes(s string) ([]int, error) {
	if err := p.RegisterMixes(); err != nil {
		return nil, err
	}
	var sizes []int
	for _, f := range splitSizes(s) {
		if f == "" {
			return nil, fmt.Errorf("an empty item; write them like 64,512,1518")
		}
		if code, ok := p.mixByName(f); ok {
			sizes = append(sizes, code)
			continue
		}
		n, err := framing.ParseSize(f)
		if err != nil {
			if strings.HasPrefix(strings.ToLower(f), framing.InlineMixPrefix) {
				return nil, err
			}
			names := "imix, imix-csit"
			for _, m := range p.Mixes {
				names += ", " + m.Name
			}
			return nil, fmt.Errorf("%s is not a frame size in bytes nor a mix (%s, or mix:64x7,570x4,1518x1 written in place); write them like 64,512,1518 or 64,imix,1518", quote(f), names)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// splitSizes splits a comma-separated list of sizes, keeping the parts of a
// mix written in place together: after an item starting "mix:", the items
// of the form SIZExWEIGHT belong to it ("64,mix:64x7,570x4,1518" is 64, the
// mix of 64x7 and 570x4, and 1518). Items are trimmed.
func splitSizes(s string) []string {
	var out []string
	inMix := false
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if inMix && isMixPart(f) {
			out[len(out)-1] += "," + f
			continue
		}
		inMix = strings.HasPrefix(strings.ToLower(f), framing.InlineMixPrefix)
		out = append(out, f)
	}
	return out
}

// isMixPart reports whether f reads SIZExWEIGHT (digits, x, digits).
func isMixPart(f string) bool {
	a, b, ok := strings.Cut(strings.ToLower(strings.ReplaceAll(f, " ", "")), "x")
	digits := func(s string) bool {
		s = strings.TrimPrefix(s, "-") // a negative weight: ParseMix names it
		return s != "" && strings.Trim(s, "0123456789") == ""
	}
	return ok && digits(a) && digits(b)
}

// SizeLoss is one frame size of a mix trial: its frames sent and received
// over every stream, and its loss.
type SizeLoss struct {
	// FrameSize is the size in bytes, FCS included.
	FrameSize int `json:"frame_size"`
	// Sent and Received count this size's frames (trials.SizeCount).
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	// LossPercent is (sent − received) × 100 / sent; 0 when none was sent.
	LossPercent float64 `json:"loss_percent"`
}

// SizeLatency is one frame size of a mix's latency (LatencyResult.Sizes).
type SizeLatency struct {
	// FrameSize is the size in bytes, FCS included.
	FrameSize int                   `json:"frame_size"`
	Summary   trials.LatencySummary `json:"summary"`
}

// sizeLatencies merges the per-size latency of trials' streams
// (StreamResult.Sizes[].Latency) by frame size, in the order the sizes first
// appear; nil when no stream timed a size.
func sizeLatencies(results []trials.Result) []SizeLatency {
	var sizes []int
	by := map[int][]trials.LatencySummary{}
	for _, r := range results {
		for _, st := range r.Streams {
			for _, c := range st.Sizes {
				if c.Latency == nil {
					continue
				}
				if _, ok := by[c.FrameSize]; !ok {
					sizes = append(sizes, c.FrameSize)
				}
				by[c.FrameSize] = append(by[c.FrameSize], *c.Latency)
			}
		}
	}
	var out []SizeLatency
	for _, f := range sizes {
		out = append(out, SizeLatency{FrameSize: f, Summary: MergeLatency(by[f])})
	}
	return out
}

// SizeLosses sums a trial's per-size counts (trials.StreamResult.Sizes)
// over its streams, in the order the sizes first appear; nil when the
// trial sent one frame size.
func SizeLosses(r trials.Result) []SizeLoss {
	var out []SizeLoss
	for _, s := range r.Streams {
		for _, c := range s.Sizes {
			k := slices.IndexFunc(out, func(l SizeLoss) bool { return l.FrameSize == c.FrameSize })
			if k < 0 {
				out = append(out, SizeLoss{FrameSize: c.FrameSize})
				k = len(out) - 1
			}
			out[k].Sent += c.Sent
			out[k].Received += min(c.Received, c.Sent)
		}
	}
	for i := range out {
		if out[i].Sent > 0 {
			out[i].LossPercent = float64(out[i].Sent-out[i].Received) * 100 / float64(out[i].Sent)
		}
	}
	return out
}

// RegisterMixes registers the custom mixes a results file defines (its
// plan's mixes) and checks that every custom mix code among its frame sizes
// is one of them, so reports and comparisons of a saved file name and size
// its mixes without the original flags. Errors name the field.
func (r *Results) RegisterMixes() error {
	if err := r.Plan.RegisterMixes(); err != nil {
		return err
	}
	sizes := slices.Clone(r.Plan.FrameSizes)
	for _, t := range r.Throughput {
		sizes = append(sizes, t.FrameSize)
	}
	for _, t := range r.Latency {
		sizes = append(sizes, t.FrameSize)
	}
	for _, t := range r.FrameLoss {
		sizes = append(sizes, t.FrameSize)
	}
	for _, t := range r.BackToBack {
		sizes = append(sizes, t.FrameSize)
	}
	for _, t := range r.Recovery {
		sizes = append(sizes, t.FrameSize)
	}
	for _, t := range r.Probes {
		sizes = append(sizes, t.FrameSize)
	}
	if err := r.Plan.checkMixSizes("frame_size", sizes); err != nil {
		return fmt.Errorf("%w (the file's plan.mixes lacks a mix its results use)", err)
	}
	return nil
}
