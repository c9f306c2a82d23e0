package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/trials"
)

// noTrafficTester fails the test if any trial reaches it.
type noTrafficTester struct{ t *testing.T }

func (n noTrafficTester) Run(_ context.Context, spec trials.Spec) (trials.Result, error) {
	n.t.Errorf("a trial was sent for bad input: %+v", spec)
	return trials.Result{Spec: spec}, io.EOF
}

// forbidTraffic replaces openTester: it counts opens and hands out a tester
// that fails the test on any trial.
func forbidTraffic(t *testing.T) *int {
	t.Helper()
	orig := openTester
	opens := new(int)
	openTester = func(ctx context.Context, s *runSetup, logw io.Writer) (openedTester, error) {
		*opens++
		return openedTester{tester: noTrafficTester{t}, close: func() {}}, nil
	}
	t.Cleanup(func() { openTester = orig })
	return opens
}

// TestBadInput feeds bad flags, plan files, sizes, rates, durations,
// addresses and interfaces; each must get its own clear error (exit code 2,
// naming the flag or field and the value) before any tester is opened, so no
// frame is sent.
func TestBadInput(t *testing.T) {
	sim := []string{"run", "--transport", "sim"}
	ports := func(extra ...string) []string {
		a := []string{"run", "--port-a", "eth8", "--addr-a", "198.18.1.2/24", "--gw-a", "198.18.1.1",
			"--port-b", "eth9", "--addr-b", "198.19.1.2/24", "--gw-b", "198.19.1.1"}
		// Later flags override earlier ones.
		return append(a, extra...)
	}
	plan := func(name string) []string { return append(sim, "--plan", filepath.Join("testdata", "badplans", name)) }
	usedOut := t.TempDir()
	os.WriteFile(filepath.Join(usedOut, journalName), []byte("{}\n"), 0o644)
	emptyDir := t.TempDir()

	tests := []struct {
		name string
		args []string
		want []string // substrings of the error, in any order
	}{
		// Sizes.
		{"size too small", append(sim, "--sizes", "63"), []string{"--sizes 63", "plan frame_sizes", "64 to 9216"}},
		{"size not a number", append(sim, "--sizes", "64,abc"), []string{"--sizes", `"abc"`, "64,512,1518"}},
		{"size too large", append(sim, "--sizes", "10000"), []string{"--sizes 10000", "64 to 9216"}},
		{"size twice", append(sim, "--sizes", "64,64"), []string{"--sizes", "64", "listed once"}},
		{"sizes empty", append(sim, "--sizes", ","), []string{"--sizes", "an empty item"}},
		{"sizes empty item", append(sim, "--sizes", "64,,128"), []string{"--sizes", `"64,,128"`, "an empty item"}},
		{"tests empty item", append(sim, "--tests", "throughput,,latency"), []string{"--tests", "an empty item"}},
		{"sim mtu zero", append(sim, "--sim-mtu", "0"), []string{"--sim-mtu 0", "68 to 65535"}},
		{"ipv6 size too small", append(sim, "--ipv6", "--sizes", "64"), []string{"--sizes 64", "IPv6/UDP", "84 to 9216"}},
		// Durations.
		{"duration without unit", append(sim, "--duration", "10"), []string{"--duration", `"10" has no unit`, "10s"}},
		{"duration not a duration", append(sim, "--duration", "fast"), []string{"--duration", `"fast"`, "60s"}},
		{"duration negative", append(sim, "--duration", "-5s"), []string{"--duration -5s", "trial.duration", "positive"}},
		{"duration zero", append(sim, "--duration", "0s"), []string{"--duration 0s", "positive"}},
		{"rest zero in rfc2544 profile", append(sim, "--rest", "0s"), []string{"--rest 0s", "profile's value", "5s"}},
		{"latency duration zero", append(sim, "--latency-duration", "0s"), []string{"--latency-duration", "positive"}},
		{"b2b cap above RFC 9004", append(sim, "--b2b-cap", "1m"), []string{"--b2b-cap 1m0s", "back_to_back.burst_cap", "RFC 9004", "30s"}},
		// Rates and loads.
		{"line rate unit", append(sim, "--line-rate", "10X"), []string{"--line-rate", `"10X"`, "10G"}},
		{"line rate zero", append(sim, "--line-rate", "0"), []string{"--line-rate", "positive"}},
		{"line rate too small", append(sim, "--line-rate", "10"), []string{"--line-rate", "below 1 kbit/s", "did you mean 10M or 10G?"}},
		{"line rate too large", append(sim, "--line-rate", "100T"), []string{"--line-rate", "above 10 Tbit/s", "100G"}},
		{"max rate below the plan", append(sim, "--max-rate", "500M"), []string{"--max-rate", "500 Mbit/s", "line rate"}},
		{"max rate not a rate", append(sim, "--max-rate", "fast"), []string{"--max-rate", `"fast"`}},
		{"max rate in bytes", append(sim, "--max-rate", "50mbps"), []string{"--max-rate", "50mbps", "bytes per second (400 Mbit/s)", "bits per second (50 Mbit/s)"}},
		{"line rate as a frame rate", append(sim, "--line-rate", "1Mpps"), []string{"--line-rate", "1Mpps is a frame rate", "bit rate is wanted"}},
		{"sim capacity in bytes", append(sim, "--sim-capacity", "100MBps"), []string{"--sim-capacity", "(800 Mbit/s)", "(100 Mbit/s)"}},
		{"resolution zero", append(sim, "--resolution", "0"), []string{"--resolution 0", "throughput.resolution_percent", "above 0"}},
		{"resolution above 100", append(sim, "--resolution", "200"), []string{"--resolution", "200"}},
		{"loss tolerance negative", append(sim, "--loss-tolerance", "-1"), []string{"--loss-tolerance", "-1"}},
		{"loss tolerance 100", append(sim, "--search", "binary", "--loss-tolerance", "100"), []string{"--loss-tolerance 100", "below 100"}},
		{"loss tolerance with mlr", append(sim, "--loss-tolerance", "1"), []string{"--loss-tolerance 1", "--goals"}},
		{"latency reps zero", append(sim, "--latency-reps", "0"), []string{"--latency-reps 0", "latency.repetitions", "1 to 1000"}},
		{"retries negative", append(sim, "--retries", "-2"), []string{"--retries -2", "0 (never run a trial again) to 10"}},
		{"max trials above the cap", append(sim, "--max-trials", "100000000"), []string{"--max-trials 100000000", "1 to 1000"}},
		{"retries too many", append(sim, "--retries", "11"), []string{"--retries 11", "to 10"}},
		// Choices.
		{"profile unknown", append(sim, "--profile", "fast"), []string{"--profile", `"fast"`, "quick"}},
		{"test unknown", append(sim, "--tests", "throughput,jitter"), []string{"--tests", `"jitter"`, "b2b"}},
		{"search unknown", append(sim, "--search", "random"), []string{"--search", `"random"`, "binary, step or combo"}},
		{"transport udp with a gateway", []string{"run", "--transport", "udp", "--addr-a", "198.18.1.2", "--gw-a", "198.18.1.1", "--addr-b", "198.19.1.2"}, []string{"--gw-a", "no gateway"}},
		{"transport udp outside the range", []string{"run", "--transport", "udp", "--addr-a", "10.1.1.1", "--addr-b", "198.19.1.2"}, []string{"--addr-a 10.1.1.1", "RFC 6815"}},
		{"transport udp ipv6 without addr6", []string{"run", "--transport", "udp", "--ipv6", "--addr-a", "198.18.1.2", "--addr-b", "198.19.1.2"}, []string{"--ipv6", "--addr6-a"}},
		{"transport udp with calibration", []string{"run", "--transport", "udp", "--addr-a", "127.0.0.1", "--addr-b", "127.0.0.1", "--calibration", "x.json"}, []string{"--calibration", "raw and xdp transports"}},
		{"transport unknown", append(sim, "--transport", "dpdk"), []string{"--transport", `"dpdk"`, "raw"}},
		{"queues where auto chooses raw", []string{"run", "--lab", "--queues", "2", "--jumbo"}, []string{"--queues 2", "only the xdp transport", "drop --queues"}},
		{"flag unknown", append(sim, "--bogus"), []string{"unknown flag --bogus", "--help"}},
		{"positional argument", append(sim, "extra"), []string{`unexpected argument "extra"`}},
		{"tests on a one-test verb", []string{"latency", "--transport", "sim", "--tests", "throughput"}, []string{"unknown flag --tests"}},
		// Plan files.
		{"plan missing", append(sim, "--plan", "testdata/badplans/none.yaml"), []string{"--plan", "none.yaml", "no such file"}},
		{"plan unknown field", plan("unknown-field.yaml"), []string{"line 3", `unknown field "durration" in trial`, `did you mean "duration"`}},
		{"plan unknown top field", plan("unknown-top.yaml"), []string{"line 1", `unknown field "colour"`, "frame_sizes"}},
		{"plan bad duration", plan("bad-duration.yaml"), []string{"line 3", "trial.duration", `"fast" is not a duration`}},
		{"plan sizes not a list", plan("sizes-not-list.yaml"), []string{"line 1", "frame_sizes", "want a list"}},
		{"plan size not a number", plan("size-not-number.yaml"), []string{"line 1", "frame_sizes[1]", `"abc"`}},
		{"plan size too big", plan("size-too-big.yaml"), []string{"frame_sizes", "20000"}},
		{"plan bad search", plan("bad-search.yaml"), []string{"throughput.search", `"warp"`, "binary"}},
		{"plan not yaml", plan("not-yaml.yaml"), []string{"not-yaml.yaml", "not valid YAML"}},
		{"plan bad profile", plan("bad-profile.yaml"), []string{"--plan", "bad-profile.yaml", `"turbo"`}},
		{"plan negative reps", plan("negative-reps.yaml"), []string{"latency.repetitions", "-3"}},
		{"plan min above max", plan("min-above-max.yaml"), []string{"throughput.min_percent", "max_percent"}},
		{"plan burst cap", plan("burst-cap.yaml"), []string{"back_to_back.burst_cap", "30s"}},
		{"plan link rate in bytes", plan("link-bps-bytes.yaml"), []string{"line 1", "link_bps", "(400 Mbit/s)", "(50 Mbit/s)"}},
		// Ports, addresses and interfaces.
		{"no ports", []string{"run"}, []string{"no ports", "--lab", "--port-a", "--transport sim"}},
		{"sim with a lab", append(sim, "--lab"), []string{"--transport sim", "drop --lab"}},
		{"lab setting with sim", append(sim, "--rate", "50mbit"), []string{"--rate", "--transport sim"}},
		{"lab and ports", ports("--lab"), []string{"--lab and --port-a/--port-b"}},
		{"temporary lab mtu", []string{"run", "--lab", "--mtu", "100"}, []string{"temporary lab", "100", "1280"}},
		{"temporary lab rate", []string{"run", "--lab", "--rate", "fast"}, []string{"temporary lab", "--rate", `"fast"`}},
		{"temporary lab rate in bytes", []string{"run", "--lab", "--rate", "50mbps"}, []string{"temporary lab", "--rate", "bytes per second (400 Mbit/s)", "bits per second (50 Mbit/s)"}},
		{"lab name invalid", []string{"run", "--lab", "Bad_Name"}, []string{"--lab Bad_Name", "a-z"}},
		{"lab not up", []string{"run", "--lab", "nosuchlab-x1"}, []string{"--lab nosuchlab-x1", "lab up --name nosuchlab-x1"}},
		{"lab setting on a named lab", []string{"run", "--lab", "nosuchlab-x1", "--mtu", "9000"}, []string{"--mtu", "temporary lab"}},
		{"port b missing", []string{"run", "--port-a", "eth8", "--addr-a", "198.18.1.2/24", "--gw-a", "198.18.1.1"}, []string{"--port-b: missing", "eth1"}},
		{"address missing", ports("--addr-a", ""), []string{"--addr-a: missing", "198.18.1.2/24"}},
		{"address without prefix", ports("--addr-a", "198.18.1.2"), []string{"--addr-a 198.18.1.2", "prefix length"}},
		{"address not an address", ports("--addr-b", "host-b"), []string{"--addr-b", `"host-b"`}},
		{"address is IPv6", ports("--addr-a", "2001:2::2/64"), []string{"--addr-a", "not an IPv4 address"}},
		{"network address", ports("--addr-a", "198.18.1.0/24"), []string{"--addr-a", "network address"}},
		{"gateway missing", ports("--gw-a", ""), []string{"--gw-a: missing", "198.18.1.1"}},
		{"gateway off subnet", ports("--gw-a", "198.19.0.1"), []string{"--gw-a 198.19.0.1", "not inside --addr-a"}},
		{"gateway is the port", ports("--gw-b", "198.19.1.2"), []string{"--gw-b 198.19.1.2", "the same as --addr-b"}},
		{"outside benchmark range", ports("--addr-a", "10.1.1.2/24", "--gw-a", "10.1.1.1"), []string{"--addr-a 10.1.1.2", "RFC 6815", "--allow-any-destination"}},
		{"ipv6 without addresses", ports("--ipv6", "--sizes", "128"), []string{"--ipv6", "--addr6-a"}},
		{"same port twice", ports("--port-b", "eth8"), []string{"both eth8"}},
		{"interface name too long", ports("--port-a", "averyveryverylongname0"), []string{"--port-a", "not an interface name"}},
		{"interface missing", ports("--port-a", "nosuch0"), []string{"--port-a nosuch0", "no such interface", "ip link"}},
		{"namespace missing", ports("--netns-a", "nosuchns-x1"), []string{"--netns-a nosuchns-x1", "no such network namespace"}},
		{"calibration with sim", append(sim, "--calibration", "cal.json"), []string{"--calibration", "raw and xdp transports"}},
		{"calibration missing", []string{"run", "--lab", "--calibration", "testdata/badplans/none.json"}, []string{"--calibration", "none.json", "rfc2544 calibrate"}},
		{"calibrate transport unknown", []string{"calibrate", "--lab", "cal", "--transport", "udp"}, []string{"calibrate --transport", `"udp"`, "raw or xdp"}},
		{"calibrate xdp jumbo", []string{"calibrate", "--lab", "cal", "--transport", "xdp", "--sizes", "64,9000"}, []string{"calibrate --sizes", "9000", "--transport xdp", "--transport raw"}},
		{"calibration not calibration", []string{"run", "--lab", "--calibration", "testdata/badplans/bad-search.yaml"}, []string{"--calibration", "calibrate --json"}},
		// Output and resume.
		{"out holds a run", append(sim, "--out", usedOut), []string{"--out", "already holds a run", "--resume"}},
		{"resume without journal", append([]string{"run"}, "--resume", emptyDir), []string{"--resume", "no journal.jsonl"}},
		{"resume with a plan flag", []string{"run", "--resume", emptyDir, "--sizes", "64"}, []string{"--sizes with --resume", "drop --sizes"}},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d bad inputs", len(tests))
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opens := forbidTraffic(t)
			_, _, err := runCLI(t, context.Background(), tt.args...)
			if err == nil {
				t.Fatalf("no error for %q", tt.args)
			}
			if got := exitCode(err, io.Discard); got != exitUsage {
				t.Errorf("exit code %d, want %d (usage) for: %v", got, exitUsage, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if *opens != 0 {
				t.Errorf("a tester was opened %d times for bad input", *opens)
			}
			if other, dup := seen[err.Error()]; dup {
				t.Errorf("same error as case %q: %v", other, err)
			}
			seen[err.Error()] = tt.name
		})
	}
}
