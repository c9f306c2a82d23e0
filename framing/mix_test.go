package framing

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMixPattern(t *testing.T) {
	for _, tc := range []struct {
		name string
		mix  Mix
		want []int
	}{
		{"imix", IMIX, []int{64, 570, 64, 64, 570, 64, 1518, 64, 570, 64, 570, 64}},
		{"one size", Mix{Name: "one", Parts: []MixPart{{128, 3}}}, []int{128, 128, 128}},
		{"even", Mix{Name: "even", Parts: []MixPart{{64, 1}, {1518, 1}}}, []int{64, 1518}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.mix.Pattern()); diff != "" {
				t.Errorf("Pattern() (-want +got):\n%s", diff)
			}
		})
	}
}

// The pattern holds each size exactly its weight times per round, and no
// size runs longer than the spread allows: never two 1518s, and no run of
// 64s longer than ceil(7/(4+1)) = 2 in the simple IMIX; in CSIT's the same
// bound, since its weights are the simple IMIX's times four.
func TestMixPatternCountsAndSpread(t *testing.T) {
	for _, m := range []Mix{IMIX, IMIXCSIT} {
		p := m.Pattern()
		if len(p) != m.Frames() {
			t.Fatalf("%s: pattern of %d frames, want %d", m.Name, len(p), m.Frames())
		}
		count := map[int]int{}
		run, longest := 0, map[int]int{}
		for i, s := range p {
			count[s]++
			if i > 0 && p[i-1] == s {
				run++
			} else {
				run = 1
			}
			longest[s] = max(longest[s], run)
		}
		for _, part := range m.Parts {
			if count[part.Size] != part.Weight {
				t.Errorf("%s: %d frames of %d bytes per round, want %d", m.Name, count[part.Size], part.Size, part.Weight)
			}
		}
		if longest[1518] > 1 || longest[570] > 1 || longest[64] > 2 {
			t.Errorf("%s: longest runs %v: sizes bunch together", m.Name, longest)
		}
	}
}

func TestMixArithmetic(t *testing.T) {
	const mean = (7*64 + 4*570 + 1518) / 12.0 // 353.83 bytes
	if got := IMIX.MeanSize(); math.Abs(got-mean) > 1e-9 {
		t.Errorf("IMIX.MeanSize() = %g, want %g", got, mean)
	}
	if got := IMIXCSIT.MeanSize(); math.Abs(got-mean) > 1e-9 {
		t.Errorf("IMIXCSIT.MeanSize() = %g, want %g (same ratio)", got, mean)
	}
	// 10 Gbit/s: 1e10 / ((353.83+20)*8) = 3,343,736 frames/s.
	lr := LineRateFPS(1e10, SizeIMIX)
	if want := 1e10 / ((mean + 20) * 8); math.Abs(lr-want) > 1e-6 {
		t.Errorf("LineRateFPS(10G, imix) = %f, want %f", lr, want)
	}
	if math.Floor(lr) != 3343736 {
		t.Errorf("LineRateFPS(10G, imix) = %f, want 3343736.x", lr)
	}
	// At line rate the L1 rate is the link, the L2 rate the link less the
	// 20 bytes per frame of preamble and gap.
	if got := L1Bps(lr, SizeIMIX); math.Abs(got-1e10) > 1e-3 {
		t.Errorf("L1Bps(line rate, imix) = %f, want 1e10", got)
	}
	if got, want := L2Bps(lr, SizeIMIX), 1e10*mean/(mean+20); math.Abs(got-want) > 1e-3 {
		t.Errorf("L2Bps(line rate, imix) = %f, want %f", got, want)
	}
	// The mix's bit rate is the sum of its parts' at their shares of the
	// frame rate.
	var l2 float64
	for _, p := range IMIX.Parts {
		l2 += L2Bps(lr*float64(p.Weight)/12, p.Size)
	}
	if got := L2Bps(lr, SizeIMIX); math.Abs(got-l2) > 1e-3 {
		t.Errorf("L2Bps(imix) = %f, sum over the parts %f", got, l2)
	}
	if got := FPSToPercent(PercentToFPS(37.5, 1e9, SizeIMIX), 1e9, SizeIMIX); math.Abs(got-37.5) > 1e-9 {
		t.Errorf("percent round trip = %g, want 37.5", got)
	}
	if LargestFrame(SizeIMIX) != 1518 || LargestFrame(512) != 512 || IMIX.Smallest() != 64 {
		t.Errorf("LargestFrame/Smallest wrong")
	}
	if MeanFrameSize(128) != 128 {
		t.Errorf("MeanFrameSize(128) = %g", MeanFrameSize(128))
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		bad  bool
	}{
		{"64", 64, false},
		{" imix ", SizeIMIX, false},
		{"IMIX", SizeIMIX, false},
		{"imix-csit", SizeIMIXCSIT, false},
		{"-100", 0, true},
		{"imx", 0, true},
		{"", 0, true},
	} {
		got, err := ParseSize(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if SizeName(SizeIMIX) != "imix" || SizeName(SizeIMIXCSIT) != "imix-csit" || SizeName(1518) != "1518" {
		t.Errorf("SizeName wrong")
	}
}

func TestValidateMix(t *testing.T) {
	if err := ValidateFrameSize(SizeIMIX, IPv4UDP, false, 1500); err != nil {
		t.Errorf("imix on IPv4, MTU 1500: %v", err)
	}
	// 64-byte frames cannot carry IPv6/UDP and the signature.
	err := ValidateFrameSize(SizeIMIX, IPv6UDP, false, 1500)
	if !errors.Is(err, ErrFrameTooSmall) {
		t.Errorf("imix on IPv6: %v, want ErrFrameTooSmall", err)
	}
	if err != nil {
		t.Logf("%v", err)
	}
	// The 1518-byte part needs MTU 1500.
	if err := ValidateFrameSize(SizeIMIX, IPv4UDP, false, 1400); !errors.Is(err, ErrAboveMTU) {
		t.Errorf("imix on MTU 1400: %v, want ErrAboveMTU", err)
	}
	bad := Mix{Name: "bad", Parts: []MixPart{{64, 0}}}
	if err := validateMix(bad, IPv4UDP, false, 0); err == nil {
		t.Errorf("weight 0 accepted")
	}
	if err := ValidateFrameSize(-1, IPv4UDP, false, 0); !errors.Is(err, ErrFrameTooSmall) {
		t.Errorf("size -1: %v, want ErrFrameTooSmall", err)
	}
}

// A template is one size: a mix code is refused, never built.
func TestTemplateRefusesMix(t *testing.T) {
	_, err := NewTemplate(TemplateConfig{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("198.18.1.2"), DstIP: netip.MustParseAddr("198.19.1.2"), FrameSize: SizeIMIX})
	if err == nil || !strings.Contains(err.Error(), "imix") {
		t.Errorf("NewTemplate(imix) = %v, want an error naming the mix", err)
	}
}
