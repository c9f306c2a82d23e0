package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rfc2544/rfc2544/rfc2544"
	"github.com/rfc2544/rfc2544/trials"
)

// TestProgressPartialInterval: the live line shows a two-host trial's
// Partial interval as this host's counts, never as "loss 0.000%".
func TestProgressPartialInterval(t *testing.T) {
	for _, tc := range []struct {
		name string
		iv   trials.Interval
		want string
	}{
		{"one host", trials.Interval{EndNs: int64(2 * time.Second), SentSoFar: 100, ReceivedSoFar: 90, LossSoFarPercent: 10}, "trial 2s loss 10.000%"},
		{"two hosts", trials.Interval{EndNs: int64(2 * time.Second), SentSoFar: 100, Partial: true}, "trial 2s sent 100 received 0 here"},
	} {
		var b bytes.Buffer
		p := newProgress(&b, rfc2544.Plan{})
		p.tty = true
		p.interval(tc.iv)
		if got := b.String(); !strings.Contains(got, tc.want) || tc.iv.Partial && strings.Contains(got, "loss 0") {
			t.Errorf("%s: live line %q, want %q", tc.name, got, tc.want)
		}
	}
}
