//go:build ignore

// testjson reads `go test -json` on stdin, prints the usual (non-verbose)
// test output, a failing test's log and the package lines, and fails when a
// test was skipped for any reason but the listed ones (allowedSkips): a
// test skipped for lack of root, of a kernel feature or for any other cause
// has not tested what it names, and CI must not pass over it. Run from
// .ci/run:
//
//	go test -json ... | go run .ci/testjson.go
//
// RFC2544_CI_ALLOW_SKIP=1 reports such skips without failing (a machine
// known to lack root; never in CI).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// allowedSkips are the skip reasons CI lets pass, by their start: a claim
// of the truth campaign (internal/truth), a goal of an open issue
// (internal/pending), a benchmark against peer tools, a helper process of
// another test. Every other skip fails CI.
var allowedSkips = []string{
	"truth campaign claim ",
	"pending issue ",
	"benchmark against peer tools",
	"helper process for ",
}

func allowed(reason string) bool {
	for _, p := range allowedSkips {
		if strings.HasPrefix(reason, p) {
			return true
		}
	}
	return false
}

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	type key struct{ pkg, test string }
	lines := map[key][]string{}
	var bad, other []string
	skips := 0
	type timed struct {
		name string
		secs float64
	}
	var times []timed
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event (e.g. a build error printed as text): pass it on.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			if e.Test == "" {
				if e.Output != "PASS\n" {
					fmt.Fprint(out, e.Output) // package lines: ok, FAIL, panics
				}
				break
			}
			lines[k] = append(lines[k], e.Output)
		case "skip":
			if e.Test == "" {
				break // a package without tests
			}
			skips++
			reason := skipReason(lines[k])
			name := fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason)
			if !allowed(reason) {
				bad = append(bad, name)
			} else {
				other = append(other, name)
			}
			delete(lines, k)
		case "fail":
			for _, l := range lines[k] {
				if !strings.HasPrefix(l, "=== ") {
					fmt.Fprint(out, l)
				}
			}
			delete(lines, k)
		case "pass":
			delete(lines, k)
		}
		if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
			times = append(times, timed{e.Package + " " + e.Test, e.Elapsed})
		}
		out.Flush()
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testjson: read go test -json: %v\n", err)
		out.Flush()
		os.Exit(1)
	}
	// The slowest tests, so that CI's time budget (15 minutes) can be kept.
	sort.Slice(times, func(i, j int) bool { return times[i].secs > times[j].secs })
	var total float64
	for _, t := range times {
		total += t.secs
	}
	fmt.Fprintf(out, "\ntestjson: %d tests ran for %.0f s; those of 5 s or more\n", len(times), total)
	for _, t := range times {
		if t.secs < 5 {
			break
		}
		fmt.Fprintf(out, "  %6.1f s  %s\n", t.secs, t.name)
	}
	sort.Strings(other)
	sort.Strings(bad)
	fmt.Fprintf(out, "\ntestjson: %d tests skipped, %d of them for a reason CI does not allow\n", skips, len(bad))
	var claims []string
	for _, s := range other {
		if strings.Contains(s, ": "+allowedSkips[0]) {
			claims = append(claims, s[:strings.Index(s, ": ")])
			continue
		}
		fmt.Fprintf(out, "  skipped (allowed): %s\n", s)
	}
	if len(claims) > 0 {
		fmt.Fprintf(out, "  skipped (allowed): %d truth campaign claims (internal/truth/campaign.sh runs them): %s\n", len(claims), strings.Join(claims, ", "))
	}
	for _, s := range bad {
		fmt.Fprintf(out, "  SKIPPED: %s\n", s)
	}
	if len(bad) > 0 {
		if os.Getenv("RFC2544_CI_ALLOW_SKIP") == "1" {
			fmt.Fprintln(out, "testjson: RFC2544_CI_ALLOW_SKIP=1: not failing; these tests did not run")
			return
		}
		fmt.Fprintln(out, "testjson: FAIL: tests were skipped for a reason CI does not allow (allowed: a truth campaign claim, a pending issue, a benchmark, a helper process); run CI as root on a kernel with network namespaces, veth, tbf, nftables and AF_XDP")
		out.Flush()
		os.Exit(1)
	}
}

// skipReason is the test's last logged line before its skip, without the
// file:line prefix.
func skipReason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(out[i])
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "===") {
			continue
		}
		if j := strings.Index(l, ": "); j > 0 && strings.Contains(l[:j], ".go:") {
			l = l[j+2:]
		}
		return l
	}
	return "(no reason logged)"
}
