package lab

import "fmt"

// ValidateSweep checks the rule counts of a firewall sweep (--fw-rules-sweep
// or a plan's lab_sweep.fw_rules): at least two, each one --fw-rules takes, none
// twice (each count's run has a folder of its own, fw-rules-N). Errors name
// the bad count and the fix, not the field: the caller names that.
func ValidateSweep(counts []int) error {
	if len(counts) < 2 {
		return fmt.Errorf("%d given: give at least two rule counts, e.g. 0, 100, 1000, 10000", len(counts))
	}
	seen := map[int]bool{}
	for _, n := range counts {
		if n < 0 || n > maxFWRules {
			return fmt.Errorf("invalid rule count %d: use counts of 0-%d, e.g. 0, 100, 1000, 10000", n, maxFWRules)
		}
		if seen[n] {
			return fmt.Errorf("rule count %d is listed twice: give each count once", n)
		}
		seen[n] = true
	}
	return nil
}
