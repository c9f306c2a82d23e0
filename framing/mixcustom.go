package framing

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A custom mix ("mix:64x7,570x4,1518x1", or a plan's named mix) travels in
// the same []int of sizes as the built-in ones, under a code derived from
// its definition: RegisterMix hashes the name and the parts into a code in
// [MinCustomMixCode, MaxCustomMixCode], so the same definition has the same
// code in every process and every file (a results file written by one run
// and read by another, two results files compared). Whoever brings a custom
// mix into a process registers it before its code is used: the plan
// (rfc2544 Plan.Validate) and a results file on reading (its plan's mixes).
// The registry only grows and never changes an entry, so a code means one
// mix for the life of the process; it is safe for concurrent use and its
// reads (MixOf) take no lock and allocate nothing.
//
// Why a registry and not a mix set passed along: a size code is read by the
// rate arithmetic (LineRateFPS, L1Bps, MeanFrameSize, ...), the trial engine,
// the search and every report, some hundred places across the packages that
// take only the code. Passing the definitions to each would change all of
// them; a content-addressed, append-only table gives each the definition
// with the same answer, wherever the code came from.

// Bounds of a custom mix, checked by ParseMix and RegisterMix.
const (
	// MaxMixParts is the most frame sizes a mix holds.
	MaxMixParts = 16
	// MaxMixWeight is the largest weight of one size.
	MaxMixWeight = 1000
	// MaxMixFrames is the most frames in one round of a mix's pattern (the
	// sum of its weights): each stream keeps a template per place in it.
	MaxMixFrames = 1000
	// MaxMixNameLen is the longest name of a plan's mix.
	MaxMixNameLen = 32
	// MaxCustomMixes is how many custom mixes one process registers.
	MaxCustomMixes = 4096
)

// Custom mix codes lie in [MinCustomMixCode, MaxCustomMixCode], within an
// int32 and far below the built-in codes (SizeIMIX).
const (
	MaxCustomMixCode = -1 << 24
	MinCustomMixCode = MaxCustomMixCode - (1<<30 - 1)
)

// InlineMixPrefix starts a mix written in place of a size: "mix:" and the
// parts, SIZExWEIGHT separated by commas.
const InlineMixPrefix = "mix:"

// Errors of custom mixes, for errors.Is.
var (
	// ErrMixCollision: two different mixes hash to the same code (never
	// seen; rename one).
	ErrMixCollision = errors.New("mix code collision")
	// ErrTooManyMixes: the process registered MaxCustomMixes already.
	ErrTooManyMixes = errors.New("too many custom mixes")
)

var customMixes struct {
	mu sync.Mutex                  // serialises writers
	m  atomic.Pointer[map[int]Mix] // copied on write; read without a lock
}

// customMix returns the registered custom mix of code.
func customMix(code int) (Mix, bool) {
	if code < MinCustomMixCode || code > MaxCustomMixCode {
		return Mix{}, false
	}
	p := customMixes.m.Load()
	if p == nil {
		return Mix{}, false
	}
	m, ok := (*p)[code]
	return m, ok
}

// IsCustomMixCode reports whether size lies in the custom mixes' code range
// (registered or not): a size list holding an unregistered one comes from
// a file whose mixes were not read.
func IsCustomMixCode(size int) bool {
	return size >= MinCustomMixCode && size <= MaxCustomMixCode
}

// MixCode is the code a mix's definition gets: FNV-1a over its name and
// parts, folded into the custom range. Pure: RegisterMix makes it usable.
func MixCode(m Mix) int {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00", m.Name)
	for _, p := range m.Parts {
		fmt.Fprintf(h, "%dx%d,", p.Size, p.Weight)
	}
	return MaxCustomMixCode - int(h.Sum64()%(1<<30))
}

// RegisterMix checks m (CheckMix) and registers it under MixCode(m),
// returning the code. Registering the same definition again returns the
// same code. Frame sizes are checked against a protocol and MTU later, by
// ValidateFrameSize on the code.
func RegisterMix(m Mix) (int, error) {
	if err := CheckMix(m); err != nil {
		return 0, err
	}
	code := MixCode(m)
	customMixes.mu.Lock()
	defer customMixes.mu.Unlock()
	old := customMixes.m.Load()
	if old != nil {
		if have, ok := (*old)[code]; ok {
			if sameMix(have, m) {
				return code, nil
			}
			return 0, fmt.Errorf("mix %s: %w with mix %s (code %d); rename one of them", m.Name, ErrMixCollision, have.Name, code)
		}
		if len(*old) >= MaxCustomMixes {
			return 0, fmt.Errorf("mix %s: %w (%d in this process); run fewer mixes per process", m.Name, ErrTooManyMixes, MaxCustomMixes)
		}
	}
	next := make(map[int]Mix, 1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	m.Parts = append([]MixPart(nil), m.Parts...) // the caller's slice may change
	next[code] = m
	customMixes.m.Store(&next)
	return code, nil
}

func sameMix(a, b Mix) bool {
	if a.Name != b.Name || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		if a.Parts[i] != b.Parts[i] {
			return false
		}
	}
	return true
}

// CheckMix checks a mix's definition, independent of the frame format: a
// name, 1 to MaxMixParts parts, each size once, between 1 and MaxJumbo
// bytes, weights 1 to MaxMixWeight, at most MaxMixFrames frames a round.
// Errors name the mix, the part and the fix. ValidateFrameSize checks the
// sizes against the IP version and the MTU.
func CheckMix(m Mix) error {
	if m.Name == "" {
		return errors.New("mix without a name; name it, e.g. name: mine")
	}
	if len(m.Parts) == 0 {
		return fmt.Errorf("mix %s: no frame sizes; give at least one, e.g. parts: [{frame_size: 64, weight: 7}, {frame_size: 1518, weight: 1}]", m.Name)
	}
	if len(m.Parts) > MaxMixParts {
		return fmt.Errorf("mix %s: %d frame sizes; a mix holds at most %d", m.Name, len(m.Parts), MaxMixParts)
	}
	total := 0
	for i, p := range m.Parts {
		if p.Size <= 0 || p.Size > MaxJumbo {
			return fmt.Errorf("mix %s: part %d: frame size %d; use a size in bytes, FCS included, from the IP version's smallest test frame (64 for IPv4) to %d", m.Name, i+1, p.Size, MaxJumbo)
		}
		if p.Weight <= 0 || p.Weight > MaxMixWeight {
			return fmt.Errorf("mix %s: frame size %d has weight %d; give every size a weight of 1 to %d (frames of that size per round, e.g. 7:4:1)", m.Name, p.Size, p.Weight, MaxMixWeight)
		}
		for _, q := range m.Parts[:i] {
			if q.Size == p.Size {
				return fmt.Errorf("mix %s: frame size %d listed twice; list each size once with its whole weight", m.Name, p.Size)
			}
		}
		total += p.Weight
	}
	if total > MaxMixFrames {
		return fmt.Errorf("mix %s: %d frames per round (the sum of the weights); at most %d: divide the weights by a common factor or round them", m.Name, total, MaxMixFrames)
	}
	return nil
}

// CheckMixName checks the name of a plan's mix: a letter, then letters,
// digits, '-', '_' or '.', at most MaxMixNameLen characters, and not a
// built-in mix's name (imix, imix-csit) nor a number. An inline mix
// (InlineMixPrefix) is named by its parts (InlineMixName).
func CheckMixName(name string) error {
	switch {
	case name == "":
		return errors.New("a mix without a name; name it, e.g. name: mine")
	case strings.HasPrefix(strings.ToLower(name), InlineMixPrefix):
		if m, err := ParseMix(name); err != nil || m.Name != name {
			return fmt.Errorf("mix name %q: names starting %q are mixes written in place; name it without the prefix, e.g. mine", name, InlineMixPrefix)
		}
		return nil
	case len(name) > MaxMixNameLen:
		return fmt.Errorf("mix name %q: longer than %d characters; use a shorter name", name, MaxMixNameLen)
	case strings.EqualFold(name, IMIX.Name) || strings.EqualFold(name, IMIXCSIT.Name):
		return fmt.Errorf("mix name %q: the built-in mix's name; name yours differently, e.g. my-%s", name, strings.ToLower(name))
	}
	if _, err := strconv.Atoi(name); err == nil {
		return fmt.Errorf("mix name %q: a number reads as a frame size; start the name with a letter, e.g. mix%s", name, name)
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if i == 0 && !letter {
			return fmt.Errorf("mix name %q: starts with %q; start it with a letter", name, r)
		}
		if !letter && !(r >= '0' && r <= '9') && r != '-' && r != '_' && r != '.' {
			return fmt.Errorf("mix name %q: character %q; use letters, digits, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

// InlineMixName is the name of a mix written in place: "mix:" and its parts
// as SIZExWEIGHT, in order ("mix:64x7,570x4,1518x1").
func InlineMixName(parts []MixPart) string {
	var b strings.Builder
	b.WriteString(InlineMixPrefix)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%dx%d", p.Size, p.Weight)
	}
	return b.String()
}

// ParseMix reads a mix written in place of a size: "mix:" and its parts,
// SIZExWEIGHT separated by commas ("mix:64x7,570x4,1518x1"); spaces are
// ignored. The mix is named by InlineMixName of its parts and checked by
// CheckMix. It is not registered (ParseSize does).
func ParseMix(s string) (Mix, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(strings.ToLower(s), InlineMixPrefix) {
		return Mix{}, fmt.Errorf("%q is not a mix: write it %s64x7,570x4,1518x1 (SIZExWEIGHT, comma separated)", s, InlineMixPrefix)
	}
	body := s[len(InlineMixPrefix):]
	var parts []MixPart
	for _, f := range strings.Split(body, ",") {
		f = strings.ReplaceAll(f, " ", "")
		size, weight, ok := strings.Cut(strings.ToLower(f), "x")
		sz, err1 := strconv.Atoi(size)
		w, err2 := strconv.Atoi(weight)
		if !ok || err1 != nil || err2 != nil {
			return Mix{}, fmt.Errorf("mix %q: part %q: write each part SIZExWEIGHT, e.g. %s64x7,570x4,1518x1", s, f, InlineMixPrefix)
		}
		parts = append(parts, MixPart{Size: sz, Weight: w})
		if len(parts) > MaxMixParts {
			return Mix{}, fmt.Errorf("mix %q: more than %d frame sizes; a mix holds at most %d", s, MaxMixParts, MaxMixParts)
		}
	}
	m := Mix{Name: InlineMixName(parts), Parts: parts}
	if err := CheckMix(m); err != nil {
		return Mix{}, err
	}
	return m, nil
}
