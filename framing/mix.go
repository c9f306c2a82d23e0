package framing

import (
	"fmt"
	"strconv"
	"strings"
)

// A frame-size mix (IMIX) is named in the same []int of frame sizes as the
// fixed sizes, by a negative code: a size below zero is never a frame, so
// every list of sizes (plans, results, reports) carries mixes unchanged and
// the rate arithmetic of this package (LineRateFPS, L1Bps, L2Bps,
// PercentToFPS, FPSToPercent) works on them through MeanFrameSize. The codes
// are far from -1 so that a stray negative size stays an error.
const (
	// SizeIMIX is the simple IMIX (see IMIX).
	SizeIMIX = -100
	// SizeIMIXCSIT is FD.io CSIT's IMIX_v4_1 (see IMIXCSIT).
	SizeIMIXCSIT = -101
)

// MixPart is one frame size of a mix and its share.
type MixPart struct {
	// Size is the frame size in bytes, FCS included.
	Size int `json:"frame_size" yaml:"frame_size"`
	// Weight is how many frames of Size one round of the mix's pattern holds.
	Weight int `json:"weight" yaml:"weight"`
}

// Mix is a fixed blend of frame sizes sent as one stream: the frames follow
// Pattern, a repeating, spread-out order (not bursts of one size).
type Mix struct {
	// Name is how sizes lists, flags and reports name the mix ("imix").
	Name string `json:"name" yaml:"name"`
	// Parts are the sizes and their weights, in the order the definition
	// gives them.
	Parts []MixPart `json:"parts" yaml:"parts"`
	// Source is where the definition comes from.
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
}

// IMIX is the "simple IMIX" of 7 frames of 64 bytes, 4 of 570 and 1 of 1518
// for every 12 (mean 353.83 bytes, FCS included), as Spirent TestCenter,
// TRex and NFVbench name it: the Agilent/Ixia 7:4:1 blend of 40-, 576- and
// 1500-byte IP packets (the 576-byte class carried, as in those tools and
// CSIT, in a 570-byte Ethernet frame). Treat as read-only.
var IMIX = Mix{Name: "imix", Parts: []MixPart{{64, 7}, {570, 4}, {1518, 1}},
	Source: "simple IMIX 7:4:1 (Spirent TestCenter, TRex, NFVbench)"}

// IMIXCSIT is FD.io CSIT's IMIX_v4_1: 28 frames of 64 bytes, 16 of 570 and
// 4 of 1518 (the simple IMIX's ratio in a 48-frame round). Treat as read-only.
var IMIXCSIT = Mix{Name: "imix-csit", Parts: []MixPart{{64, 28}, {570, 16}, {1518, 4}},
	Source: "FD.io CSIT IMIX_v4_1"}

// MixOf returns the mix a size code names: a built-in one or a registered
// custom one (RegisterMix); ok is false for a frame size (any size ≥ 0) or
// an unknown code. The mix is shared: treat as read-only.
func MixOf(size int) (m Mix, ok bool) {
	switch size {
	case SizeIMIX:
		return IMIX, true
	case SizeIMIXCSIT:
		return IMIXCSIT, true
	}
	return customMix(size)
}

// IsMix reports whether size is a mix code rather than a frame size.
func IsMix(size int) bool { _, ok := MixOf(size); return ok }

// SizeName is how a size is written in flags, plan files and reports: the
// mix's name for a mix code, the number of bytes otherwise.
func SizeName(size int) string {
	if m, ok := MixOf(size); ok {
		return m.Name
	}
	return strconv.Itoa(size)
}

// ParseSize reads one frame size: a number of bytes, the name of a built-in
// mix ("imix", "imix-csit"), or a mix written in place
// ("mix:64x7,570x4,1518x1", ParseMix), which it registers (RegisterMix).
// It checks the syntax (and a mix's definition) only; ValidateFrameSize
// checks the range.
func ParseSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case IMIX.Name:
		return SizeIMIX, nil
	case IMIXCSIT.Name:
		return SizeIMIXCSIT, nil
	}
	if strings.HasPrefix(strings.ToLower(s), InlineMixPrefix) {
		m, err := ParseMix(s)
		if err != nil {
			return 0, err
		}
		return RegisterMix(m)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is neither a frame size in bytes nor a mix (%s, %s or %s64x7,570x4,1518x1)", s, IMIX.Name, IMIXCSIT.Name, InlineMixPrefix)
	}
	return n, nil
}

// Frames is the number of frames in one round of the mix's pattern.
func (m Mix) Frames() int {
	n := 0
	for _, p := range m.Parts {
		n += p.Weight
	}
	return n
}

// MeanSize is the mix's average frame size in bytes, FCS included: the
// weighted mean Σ wᵢ·Fᵢ / Σ wᵢ. The mix's line rate is that of a frame of
// this size (RFC 2544 §9.1's arithmetic, with the per-frame 20 bytes of
// preamble and gap added to every frame): LineRateFPS(link, F̄) =
// link / ((F̄+20)·8).
func (m Mix) MeanSize() float64 {
	n, b := 0, 0
	for _, p := range m.Parts {
		n += p.Weight
		b += p.Weight * p.Size
	}
	if n == 0 {
		return 0
	}
	return float64(b) / float64(n)
}

// Largest and Smallest are the mix's largest and smallest frame sizes.
func (m Mix) Largest() int {
	l := 0
	for _, p := range m.Parts {
		l = max(l, p.Size)
	}
	return l
}

// Smallest is the mix's smallest frame size.
func (m Mix) Smallest() int {
	s := 0
	for i, p := range m.Parts {
		if i == 0 || p.Size < s {
			s = p.Size
		}
	}
	return s
}

// Pattern is one round of the mix: Frames() frame sizes in the order they
// are sent, repeated for the whole stream (frame n has size
// Pattern()[n mod Frames()]). The order is smooth weighted round-robin: each
// step every part gains its weight, the part with the most credit (the first
// listed on a tie) is sent and loses the round's total, so each size is
// spread evenly over the round (imix: 64 570 64 64 570 64 1518 64 570 64 570
// 64) and never sent as a burst of one size.
func (m Mix) Pattern() []int {
	total := m.Frames()
	out := make([]int, 0, total)
	credit := make([]int, len(m.Parts))
	for range total {
		best := 0
		for i, p := range m.Parts {
			credit[i] += p.Weight
			if credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		out = append(out, m.Parts[best].Size)
	}
	return out
}

// MeanFrameSize is the average frame size of a size code: the mix's
// MeanSize for a mix code, the size itself otherwise.
func MeanFrameSize(size int) float64 {
	if m, ok := MixOf(size); ok {
		return m.MeanSize()
	}
	return float64(size)
}

// LargestFrame is the largest frame a size code sends (the size itself for
// a frame size): what must fit the path MTU and the transmit buffers.
func LargestFrame(size int) int {
	if m, ok := MixOf(size); ok {
		return m.Largest()
	}
	return size
}

// validateMix checks every part of a mix like ValidateFrameSize; the error
// names the mix and the part.
func validateMix(m Mix, proto Proto, vlan bool, pathMTU int) error {
	if err := CheckMix(m); err != nil {
		return err
	}
	for _, p := range m.Parts {
		if err := ValidateFrameSize(p.Size, proto, vlan, pathMTU); err != nil {
			return fmt.Errorf("mix %s: %w", m.Name, err)
		}
	}
	return nil
}
