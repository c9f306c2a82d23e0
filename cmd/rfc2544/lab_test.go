package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/lab"
)

// TestLabBadInput: every bad lab flag is a usage error (exit 2) that names
// the flag and the value, and nothing is built.
func TestLabBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no sub-command", args: []string{"lab"}, want: "no sub-command"},
		{name: "unknown sub-command", args: []string{"lab", "build"}, want: `unknown sub-command "build"`},
		{name: "no name", args: []string{"lab", "up"}, want: "--name"},
		{name: "bad name", args: []string{"lab", "up", "--name", "My Lab"}, want: `invalid lab name "My Lab"`},
		{name: "bad rate", args: []string{"lab", "up", "--name", "x", "--rate", "50mbt"}, want: `--rate: invalid rate "50mbt"`},
		{name: "bad rate-ba", args: []string{"lab", "up", "--name", "x", "--rate-ba", "fast"}, want: `--rate-ba: invalid rate "fast"`},
		{name: "bad loss", args: []string{"lab", "up", "--name", "x", "--loss", "1.5.%"}, want: `--loss: invalid percentage "1.5.%"`},
		{name: "bad delay", args: []string{"lab", "up", "--name", "x", "--delay", "2"}, want: `--delay: invalid duration "2"`},
		{name: "bad mtu", args: []string{"lab", "up", "--name", "x", "--mtu-b", "70000"}, want: "--mtu-b: invalid MTU 70000"},
		{name: "bad topology", args: []string{"lab", "up", "--name", "x", "--topology", "star"}, want: `invalid topology "star"`},
		{name: "bad dut", args: []string{"lab", "up", "--name", "x", "--dut", "asic"}, want: `invalid dut "asic"`},
		{name: "unknown flag", args: []string{"lab", "up", "--name", "x", "--speed", "1"}, want: "-speed"},
		{name: "stray argument", args: []string{"lab", "down", "--name", "x", "now"}, want: `unexpected argument "now"`},
		{name: "status bad name", args: []string{"lab", "status", "--name", ""}, want: "lab name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), tt.args, &out, &errb)
			var ue usageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v (%T), want a usage error", err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestLabVerb runs up, status --json, list and down through the CLI.
func TestLabVerb(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("building a lab needs root (network namespaces); run the tests as root")
	}
	name := fmt.Sprintf("t%d-cli", os.Getpid())
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"lab", "up", "--name", name, "--rate-ab", "20mbit", "--loss-ba", "1%", "--mtu-a", "9000"}, &out, &out); err != nil {
		t.Fatalf("lab up: %v\n%s", err, out.String())
	}
	t.Cleanup(func() { run(ctx, []string{"lab", "down", "--name", name}, &out, &out) })
	if !strings.Contains(out.String(), "--rate-ab 20mbit") || !strings.Contains(out.String(), "--mtu-a 9000 --mtu-b 1500") {
		t.Errorf("lab up output lacks the settings:\n%s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"lab", "status", "--name", name, "--json"}, &out, &out); err != nil {
		t.Fatalf("lab status: %v", err)
	}
	var st lab.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out.String())
	}
	if st.State == nil || st.State.A.MTU != 9000 || st.State.B.MTU != 1500 || st.Counters == nil || st.State.Config.AtoB.RateBps != 20e6 {
		t.Errorf("status --json = %s", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"lab", "list"}, &out, &out); err != nil || !strings.Contains(out.String(), name) {
		t.Errorf("lab list: %v\n%s", err, out.String())
	}
	if err := run(ctx, []string{"lab", "up", "--name", name}, &out, &out); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("second lab up: %v, want name in use", err)
	}
	out.Reset()
	if err := run(ctx, []string{"lab", "down", "--name", name}, &out, &out); err != nil {
		t.Fatalf("lab down: %v", err)
	}
	if err := run(ctx, []string{"lab", "status", "--name", name}, &out, &out); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("status after down: %v, want not found", err)
	}
}

func TestSweepBadInput(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--fw-rules-sweep 0,x", `invalid rule count "x"`},
		{"--fw-rules-sweep 100", "at least two rule counts"},
		{"--fw-rules-sweep 0,100 --fw-rules 5", "give one"},
	} {
		err := run(context.Background(), append([]string{"throughput", "--lab"}, strings.Fields(tc.args)...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
