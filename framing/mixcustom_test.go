package framing

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Mix
		wantErr string
	}{
		{in: "mix:64x7,570x4,1518x1", want: Mix{Name: "mix:64x7,570x4,1518x1", Parts: []MixPart{{64, 7}, {570, 4}, {1518, 1}}}},
		{in: " MIX: 64X7, 1518x1 ", want: Mix{Name: "mix:64x7,1518x1", Parts: []MixPart{{64, 7}, {1518, 1}}}},
		{in: "mix:128x1", want: Mix{Name: "mix:128x1", Parts: []MixPart{{128, 1}}}},
		{in: "mix:", wantErr: "SIZExWEIGHT"},
		{in: "mix:64", wantErr: "SIZExWEIGHT"},
		{in: "mix:64x0", wantErr: "weight 0"},
		{in: "mix:64x-3", wantErr: "weight -3"},
		{in: "mix:64x1001", wantErr: "weight of 1 to 1000"},
		{in: "mix:64x600,128x600", wantErr: "1200 frames per round"},
		{in: "mix:0x1", wantErr: "frame size 0"},
		{in: "mix:9217x1", wantErr: "frame size 9217"},
		{in: "mix:64x1,64x2", wantErr: "listed twice"},
		{in: "mix:64x1,,128x1", wantErr: "SIZExWEIGHT"},
		{in: "mix:" + strings.Repeat("64x1,", 17) + "64x1", wantErr: "at most 16"},
		{in: "64x7", wantErr: "not a mix"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMix(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseMix(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
				}
				t.Logf("%v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseMix(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// An inline mix parses to a registered code: same definition, same code,
// in any spelling; the code names, sizes and sends the mix like imix.
func TestParseSizeInlineMix(t *testing.T) {
	a, err := ParseSize("mix:64x7,570x4,1518x1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseSize("MIX:64x7, 570x4, 1518x1")
	if err != nil || b != a {
		t.Fatalf("same mix again: code %d, %v; want %d", b, err, a)
	}
	if !IsCustomMixCode(a) || !IsMix(a) || a > MaxCustomMixCode || a < MinCustomMixCode || int(int32(a)) != a {
		t.Fatalf("code %d outside the custom range [%d, %d]", a, MinCustomMixCode, MaxCustomMixCode)
	}
	if SizeName(a) != "mix:64x7,570x4,1518x1" {
		t.Errorf("SizeName = %q", SizeName(a))
	}
	// The simple IMIX's definition written in place: same arithmetic.
	if MeanFrameSize(a) != IMIX.MeanSize() || LargestFrame(a) != 1518 {
		t.Errorf("mean %g largest %d; want imix's %g, 1518", MeanFrameSize(a), LargestFrame(a), IMIX.MeanSize())
	}
	m, _ := MixOf(a)
	if diff := cmp.Diff(IMIX.Pattern(), m.Pattern()); diff != "" {
		t.Errorf("pattern (-imix +inline):\n%s", diff)
	}
	// A different order is a different pattern, so a different mix.
	c, err := ParseSize("mix:570x4,64x7,1518x1")
	if err != nil || c == a {
		t.Errorf("reordered mix: code %d (%v), want one of its own", c, err)
	}
	if err := ValidateFrameSize(a, IPv6UDP, false, 0); !errors.Is(err, ErrFrameTooSmall) || !strings.Contains(err.Error(), "mix:64x7") {
		t.Errorf("inline mix with 64 B on IPv6: %v, want ErrFrameTooSmall naming the mix", err)
	}
	if err := ValidateFrameSize(a, IPv4UDP, false, 1400); !errors.Is(err, ErrAboveMTU) {
		t.Errorf("1518 B part on MTU 1400: %v, want ErrAboveMTU", err)
	}
}

// Codes are a pure function of the definition: a fixed vector pins them, so
// a results file's codes mean the same mixes to every later version.
func TestMixCodeStable(t *testing.T) {
	m := Mix{Name: "mine", Parts: []MixPart{{64, 7}, {570, 4}, {1518, 1}}}
	const want = -101282937
	if got := MixCode(m); got != want {
		t.Errorf("MixCode(mine 64x7,570x4,1518x1) = %d, want %d (a changed hash breaks saved results)", got, want)
	}
	m2 := m
	m2.Name = "yours"
	if MixCode(m2) == MixCode(m) {
		t.Errorf("renamed mix has the same code")
	}
}

func TestRegisterMix(t *testing.T) {
	m := Mix{Name: "reg-test", Parts: []MixPart{{100, 3}, {200, 1}}}
	code, err := RegisterMix(m)
	if err != nil {
		t.Fatal(err)
	}
	m.Parts[0].Weight = 99 // the registry keeps its own copy
	got, ok := MixOf(code)
	if !ok || got.Parts[0].Weight != 3 {
		t.Fatalf("MixOf(%d) = %+v, %v; want the mix as registered", code, got, ok)
	}
	if _, err := RegisterMix(Mix{Name: "bad", Parts: []MixPart{{64, 0}}}); err == nil {
		t.Errorf("weight 0 registered")
	}
	if _, ok := MixOf(MaxCustomMixCode); ok {
		t.Errorf("an unregistered code is a mix")
	}
	// Concurrent registration and reading (run with -race).
	var wg sync.WaitGroup
	codes := make([]int, 32)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := RegisterMix(Mix{Name: fmt.Sprintf("conc%d", i%8), Parts: []MixPart{{64 + i%8, 1}}})
			if err != nil {
				t.Error(err)
			}
			codes[i] = c
			if _, ok := MixOf(c); !ok {
				t.Errorf("code %d not found right after registering", c)
			}
		}()
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != codes[i%8] {
			t.Errorf("mix %d: code %d, the same definition got %d", i, codes[i], codes[i%8])
		}
	}
}

// Looking a code up allocates nothing (the trial engine does it per trial,
// reports per row).
func TestMixOfAllocs(t *testing.T) {
	code, err := ParseSize("mix:64x1,1518x1")
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = MixOf(code); _ = MeanFrameSize(code) }); n != 0 {
		t.Errorf("MixOf allocates %g times", n)
	}
}

func TestCheckMixName(t *testing.T) {
	for _, tc := range []struct {
		name, wantErr string
	}{
		{"mine", ""},
		{"Tolly-5.1_b", ""},
		{"mix:64x7,1518x1", ""},
		{"mix:64x7, 1518x1", "written in place"},
		{"mix:64", "written in place"},
		{"", "without a name"},
		{"imix", "built-in"},
		{"IMIX-CSIT", "built-in"},
		{"64", "a number"},
		{"7up", "start it with a letter"},
		{"my mix", "character ' '"},
		{strings.Repeat("a", 33), "longer than 32"},
	} {
		err := CheckMixName(tc.name)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckMixName(%q) = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// FuzzParseMix: whatever the text, ParseMix returns a mix CheckMix accepts
// or an error, never panics; a parsed mix's name is its canonical spelling,
// which parses back to the same mix (and so the same code).
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"mix:64x7,570x4,1518x1", "MIX: 64X1", "mix:", "mix:x", "mix:64x", "mix:1x1,2x2",
		"mix:99999999999999999999x1", "mix:64x7,,", "mix:-64x1", "imix", "mix:64x1000,128x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix(s)
		if err != nil {
			return
		}
		if err := CheckMix(m); err != nil {
			t.Fatalf("ParseMix(%q) = %+v, which CheckMix refuses: %v", s, m, err)
		}
		if err := CheckMixName(m.Name); err != nil {
			t.Fatalf("ParseMix(%q) named %q: %v", s, m.Name, err)
		}
		again, err := ParseMix(m.Name)
		if err != nil || !sameMix(again, m) || MixCode(again) != MixCode(m) {
			t.Fatalf("ParseMix(%q) = %+v; its name %q reads back as %+v, %v", s, m, m.Name, again, err)
		}
	})
}
