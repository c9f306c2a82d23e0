package rfc2544

import (
	"fmt"
	"strings"
)

// testNames are the names ParseTests takes: the Test values and the short
// names of the command's verbs.
var testNames = map[string]Test{
	"throughput":      TestThroughput,
	"latency":         TestLatency,
	"loss":            TestFrameLoss,
	"frame_loss":      TestFrameLoss,
	"b2b":             TestBackToBack,
	"back_to_back":    TestBackToBack,
	"recovery":        TestRecovery,
	"system_recovery": TestRecovery,
}

// ParseTests reads a comma-separated list of tests, in the order given, each
// once: throughput, latency, loss (frame_loss), b2b (back_to_back), recovery
// (system_recovery), or all (the four of §26.1-26.4). Case and spaces around
// names do not matter.
func ParseTests(s string) ([]Test, error) {
	var tests []Test
	seen := map[Test]bool{}
	add := func(t Test) {
		if !seen[t] {
			seen[t] = true
			tests = append(tests, t)
		}
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		switch t, ok := testNames[f]; {
		case f == "":
			return nil, fmt.Errorf("an empty item; e.g. throughput,latency")
		case f == "all":
			for _, t := range []Test{TestThroughput, TestLatency, TestFrameLoss, TestBackToBack} {
				add(t)
			}
		case !ok:
			return nil, fmt.Errorf("unknown test %s; choose from throughput, latency, loss, b2b, recovery or all", quote(f))
		default:
			add(t)
		}
	}
	return tests, nil
}

// ParseFrameSizes reads a comma-separated list of frame sizes in bytes, FCS
// included, and frame-size mixes: by name (imix, imix-csit) or written in
// place (mix:64x7,570x4,1518x1, whose commas do not split the list; see
// framing.ParseSize). Their range is checked with the plan's
// (Plan.Validate); a plan's own mixes are read by name with
// PlanFlags.Apply.
func ParseFrameSizes(s string) ([]int, error) {
	return Plan{}.parseSizes(s)
}
