package lab

import (
	"fmt"
	"strconv"
	"strings"
)

// cpuMask formats a sysfs CPU bitmap (comma-separated 32-bit hex groups)
// with the given CPUs set.
func cpuMask(cpus []int) string {
	maxc := 0
	for _, c := range cpus {
		maxc = max(maxc, c)
	}
	words := make([]uint32, maxc/32+1)
	for _, c := range cpus {
		words[c/32] |= 1 << (c % 32)
	}
	var b strings.Builder
	for i := len(words) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			fmt.Fprintf(&b, ",%08x", words[i])
		} else {
			fmt.Fprintf(&b, "%x", words[i])
		}
	}
	return b.String()
}

// parseCPUMask is the inverse of cpuMask.
func parseCPUMask(s string) ([]int, error) {
	groups := strings.Split(strings.TrimSpace(s), ",")
	var cpus []int
	for i := range groups {
		w, err := strconv.ParseUint(groups[len(groups)-1-i], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("parse cpu mask %q: %w", s, err)
		}
		for bit := 0; bit < 32; bit++ {
			if w&(1<<bit) != 0 {
				cpus = append(cpus, i*32+bit)
			}
		}
	}
	return cpus, nil
}
