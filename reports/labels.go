package reports

import (
	"path/filepath"
	"strings"
)

// RunLabels names runs (for CompareRuns) by their results files' paths,
// with the common leading folders and a common "results.json" dropped
// (sweep/fw-rules-100/results.json → fw-rules-100).
func RunLabels(files []string) []string {
	parts := make([][]string, len(files))
	for i, f := range files {
		parts[i] = strings.Split(filepath.ToSlash(filepath.Clean(f)), "/")
	}
	common := func(at func(p []string) (string, bool)) bool {
		first, ok := at(parts[0])
		for _, p := range parts[1:] {
			v, ok2 := at(p)
			if !ok || !ok2 || v != first {
				return false
			}
		}
		return ok
	}
	lead, tail := 0, 0
	for common(func(p []string) (string, bool) { return pathPart(p, lead) }) && lead < len(parts[0])-1 {
		lead++
	}
	for common(func(p []string) (string, bool) { return pathPart(p, len(p)-1-tail) }) && tail < len(parts[0])-1-lead {
		tail++
	}
	out := make([]string, len(files))
	for i, p := range parts {
		if lead < len(p)-tail {
			out[i] = strings.Join(p[lead:len(p)-tail], "/")
		}
		if out[i] == "" {
			out[i] = files[i]
		}
	}
	return out
}

func pathPart(p []string, i int) (string, bool) {
	if i < 0 || i >= len(p) {
		return "", false
	}
	return p[i], true
}

// PairLabels names the two runs of a Comparison by their file names, with as many parent
// folders as it takes to tell them apart (dut1/results.json).
func PairLabels(a, b string) (string, string) {
	pa := strings.Split(filepath.ToSlash(filepath.Clean(a)), "/")
	pb := strings.Split(filepath.ToSlash(filepath.Clean(b)), "/")
	for n := 1; n <= max(len(pa), len(pb)); n++ {
		la := strings.Join(pa[max(0, len(pa)-n):], "/")
		lb := strings.Join(pb[max(0, len(pb)-n):], "/")
		if la != lb {
			return la, lb
		}
	}
	return a, b
}
