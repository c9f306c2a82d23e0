package rfc2544

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTests(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     []Test
		err      string
	}{
		{"aliases in order", "B2B, latency,frame_loss", []Test{TestBackToBack, TestLatency, TestFrameLoss}, ""},
		{"all then more, each once", "all,recovery,throughput", []Test{TestThroughput, TestLatency, TestFrameLoss, TestBackToBack, TestRecovery}, ""},
		{"unknown", "throughput,jitter", nil, `unknown test "jitter"`},
		{"empty item", "throughput,,latency", nil, "an empty item"},
		{"empty", "", nil, "an empty item"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTests(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseTests(%q) error %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ParseTests(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestParseFrameSizes(t *testing.T) {
	got, err := ParseFrameSizes(" 64,1518 ,9018")
	if err != nil || !cmp.Equal(got, []int{64, 1518, 9018}) {
		t.Errorf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{"64,abc": `"abc" is not a frame size`, "64,,128": "an empty item", "64," + strings.Repeat("9", 300): "(300 bytes)"} {
		if _, err := ParseFrameSizes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFrameSizes(%.20q...) error %v, want %q", in, err, want)
		}
	}
}
