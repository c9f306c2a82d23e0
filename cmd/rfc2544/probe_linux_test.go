//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// TestProbeVerb: 'probe' names the kernel, the lab's features and, per
// receive stamp, what AF_XDP's verifier says, agreeing with
// trials.ProbeXDP; extra arguments are a usage error.
func TestProbeVerb(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("probe tries kernel features as root; run the tests as root")
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"probe"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log(got)
	x, err := trials.ProbeXDP()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kernel      Linux ", "lab         tbf yes", "nftables yes", `stamps receive times with "` + x.Stamp + `"`} {
		if !strings.Contains(got, want) {
			t.Errorf("probe output lacks %q", want)
		}
	}
	for k, why := range x.Refused {
		if !strings.Contains(got, k) || !strings.Contains(got, why) {
			t.Errorf("probe output does not say the %s stamp is refused (%s)", k, why)
		}
	}
	if err := run(context.Background(), []string{"probe", "x"}, &out, &out); exitCode(err, &out) != exitUsage {
		t.Errorf("probe x: %v, want a usage error", err)
	}
}
