package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestVersionVerb: 'version' and '--version' print the same line.
func TestVersionVerb(t *testing.T) {
	var a, b bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &a, &a); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"--version"}, &b, &b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !strings.HasPrefix(a.String(), "rfc2544 ") || !strings.Contains(a.String(), "go1.") {
		t.Errorf("version %q, --version %q", a.String(), b.String())
	}
}

// TestHelpSameWay: every verb prints its help to stdout, flags as --name.
func TestHelpSameWay(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"report"}, {"compare"}, {"calibrate"}, {"agent"}, {"gen"}, {"lab", "up"}, {"lab", "down"}, {"lab", "status"}, {"lab", "list"}, {"probe"}} {
		var out, errw bytes.Buffer
		if err := run(context.Background(), append(args, "--help"), &out, &errw); err != nil {
			t.Errorf("%v --help: %v", args, err)
		}
		o := out.String()
		noFlags := args[len(args)-1] == "list" || args[0] == "probe"
		if errw.Len() > 0 || !strings.Contains(o, "Usage: rfc2544") || !noFlags != strings.Contains(o, "\n  --") {
			t.Errorf("%v --help: stdout %q, stderr %q", args, o, errw.String())
		}
		for _, l := range strings.Split(o, "\n") {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
				t.Errorf("%v --help: a flag printed Go's way: %q", args, l)
			}
		}
	}
}

// TestPlanRateGrammar: a plan's link_bps reads the flags' rate grammar.
func TestPlanRateGrammar(t *testing.T) {
	base, err := rfc2544.DefaultPlan("quick")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]float64{"10G": 10e9, "2.5Gbit/s": 2.5e9, "100mbit": 100e6, "1e9": 1e9, "10000000000": 10e9} {
		p, given, err := rfc2544.ParsePlan("plan.yaml", []byte("link_bps: "+in+"\n"), base)
		if err != nil || p.LinkBps != want || !given["link_bps"] {
			t.Errorf("link_bps: %s: got %g, %v (given %v); want %g", in, p.LinkBps, err, given, want)
		}
	}
}
