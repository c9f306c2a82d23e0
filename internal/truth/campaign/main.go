// Command campaign is the truth campaign's helper (internal/truth/campaign.sh
// and soak.sh run it):
//
//	campaign list            the claims' tests: one "package<TAB>-run regexp" line per package
//	campaign gating          the gating lab tests (those of *_linux_test.go files that are not claims), the same way
//	campaign table RUN.json… the table of the claims measured in those runs (go test -json files)
//	campaign soak RUN.json…  per-test passes of the gating lab tests over those runs
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/internal/truth"
)

const module = "github.com/rfc2544/rfc2544"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "campaign:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: campaign list|gating|table|soak [files]")
	}
	fl := flag.NewFlagSet(args[0], flag.ContinueOnError)
	root := fl.String("root", ".", "the repository's root")
	if err := fl.Parse(args[1:]); err != nil {
		return err
	}
	tests, err := scan(*root)
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		return printRuns(w, tests, func(t testFunc) bool { return t.claim })
	case "gating":
		return printRuns(w, tests, func(t testFunc) bool { return !t.claim && t.linux })
	case "table":
		runs, err := readRuns(fl.Args())
		if err != nil {
			return err
		}
		return table(w, tests, runs)
	case "soak":
		runs, err := readRuns(fl.Args())
		if err != nil {
			return err
		}
		return soak(w, tests, runs)
	}
	return fmt.Errorf("unknown command %q: want list, gating, table or soak", args[0])
}

// testFunc is one Test function of the repository.
type testFunc struct {
	pkg, name, file string
	claim           bool // its body calls truth.New
	linux           bool // it is in a *_linux_test.go file
}

// scan finds every Test function under root.
func scan(root string) ([]testFunc, error) {
	var out []testFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := module
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" || fn.Body == nil {
				continue
			}
			t := testFunc{pkg: pkg, name: fn.Name.Name, file: filepath.ToSlash(filepath.Join(rel, filepath.Base(path))),
				linux: strings.HasSuffix(path, "_linux_test.go")}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "New" {
						if x, ok := s.X.(*ast.Ident); ok && x.Name == "truth" {
							t.claim = true
						}
					}
				}
				return !t.claim
			})
			out = append(out, t)
		}
		return nil
	})
	return out, err
}

// printRuns prints, per package, the tests that keep as a -run regexp.
func printRuns(w io.Writer, tests []testFunc, keep func(testFunc) bool) error {
	by := map[string][]string{}
	for _, t := range tests {
		if keep(t) {
			by[t.pkg] = append(by[t.pkg], t.name)
		}
	}
	for _, pkg := range sortedKeys(by) {
		fmt.Fprintf(w, "%s\t^(%s)$\n", "./"+strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/"), strings.Join(by[pkg], "|"))
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// runRecord is what one run (one go test -json file) said.
type runRecord struct {
	file    string
	seed    string
	records []truth.Record
	result  map[string]string // package.Test → pass, fail, skip
	reason  map[string]string // package.Test → the last log line of a failure
	claimOf map[string]string // package.Test → the claim it recorded
}

type event struct {
	Action, Package, Test, Output string
}

// readRuns reads go test -json files, one run each; a file named
// …seed-N… carries the run's seed.
func readRuns(files []string) ([]runRecord, error) {
	var runs []runRecord
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		r := runRecord{file: name, result: map[string]string{}, reason: map[string]string{}, claimOf: map[string]string{}}
		if i := strings.Index(name, "seed-"); i >= 0 {
			r.seed = strings.TrimSuffix(filepath.Base(name[i+5:]), ".json")
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
				continue
			}
			top, _, _ := strings.Cut(e.Test, "/")
			key := e.Package + "." + top
			switch e.Action {
			case "output":
				out := strings.TrimSpace(e.Output)
				if i := strings.Index(out, truth.Line); i >= 0 {
					var rec truth.Record
					if json.Unmarshal([]byte(out[i+len(truth.Line):]), &rec) == nil {
						r.records = append(r.records, rec)
						r.claimOf[key] = rec.Claim
					}
				} else if out != "" && !strings.HasPrefix(out, "===") && !strings.HasPrefix(out, "---") {
					r.reason[key] = out
				}
			case "pass", "fail", "skip":
				if e.Test == top {
					r.result[key] = e.Action
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// row is one line of the campaign's table.
type row struct {
	claim, what     string
	truths          []float64
	lo, hi          float64
	ratio           bool
	runs, passes    int
	values          []float64 // measured/truth, or measured
	failures, seeds []string
}

func table(w io.Writer, tests []testFunc, runs []runRecord) error {
	rows := map[[2]string]*row{}
	var order [][2]string
	for _, r := range runs {
		for _, rec := range r.records {
			k := [2]string{rec.Claim, rec.What}
			x := rows[k]
			if x == nil {
				x = &row{claim: rec.Claim, what: rec.What, lo: rec.Lo, hi: rec.Hi, ratio: rec.Truth != 0}
				rows[k] = x
				order = append(order, k)
			}
			x.runs++
			v := rec.Measured
			if x.ratio {
				v = rec.Measured / rec.Truth
				x.truths = append(x.truths, rec.Truth)
			}
			x.values = append(x.values, v)
			x.lo, x.hi = min(x.lo, rec.Lo), max(x.hi, rec.Hi)
			if rec.Pass {
				x.passes++
			} else {
				x.failures = append(x.failures, fmt.Sprintf("seed %s, %s: measured %.4g (truth %.4g, window %.4g … %.4g)", r.seed, rec.Case, rec.Measured, rec.Truth, rec.Lo, rec.Hi))
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i][0] < order[j][0] })
	fmt.Fprintf(w, "| claim | measured | ground truth | window | runs | passes | min | median | max |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range order {
		x := rows[k]
		truthCol, window := "set per draw (see cases)", fmt.Sprintf("%s … %s", g(x.lo), g(x.hi))
		if x.ratio {
			window = fmt.Sprintf("%s … %s × truth", g(x.lo), g(x.hi))
			truthCol = fmt.Sprintf("drawn: %s … %s", g(slices.Min(x.truths)), g(slices.Max(x.truths)))
		} else {
			truthCol = "bound"
		}
		s := slices.Clone(x.values)
		slices.Sort(s)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d | %s | %s | %s |\n", x.claim, x.what, truthCol, window, x.runs, x.passes, g(s[0]), g(median(s)), g(s[len(s)-1]))
	}
	// Tests of claims that failed, with or without a record.
	claims := map[string]bool{}
	for _, t := range tests {
		if t.claim {
			claims[t.pkg+"."+t.name] = true
		}
	}
	type tally struct{ runs, passes int }
	byTest := map[string]*tally{}
	var fails []string
	for _, r := range runs {
		for key, res := range r.result {
			if !claims[key] || res == "skip" {
				continue
			}
			t := byTest[key]
			if t == nil {
				t = &tally{}
				byTest[key] = t
			}
			t.runs++
			if res == "pass" {
				t.passes++
			} else {
				fails = append(fails, fmt.Sprintf("%s (seed %s): %s", strings.TrimPrefix(key, module+"/"), r.seed, r.reason[key]))
			}
		}
	}
	fmt.Fprintf(w, "\n| test | runs | passes |\n|---|---|---|\n")
	for _, k := range sortedKeys(byTest) {
		fmt.Fprintf(w, "| %s | %d | %d |\n", strings.TrimPrefix(k, module+"/"), byTest[k].runs, byTest[k].passes)
	}
	for _, k := range order {
		for _, f := range rows[k].failures {
			fmt.Fprintf(w, "\nOUT OF WINDOW %s %s: %s", k[0], k[1], f)
		}
	}
	for _, f := range fails {
		fmt.Fprintf(w, "\nFAILED %s", f)
	}
	fmt.Fprintln(w)
	return nil
}

func soak(w io.Writer, tests []testFunc, runs []runRecord) error {
	gating := map[string]testFunc{}
	for _, t := range tests {
		if !t.claim && t.linux {
			gating[t.pkg+"."+t.name] = t
		}
	}
	type tally struct{ runs, passes, skips int }
	by := map[string]*tally{}
	var fails []string
	for _, r := range runs {
		for key, res := range r.result {
			if _, ok := gating[key]; !ok {
				continue
			}
			t := by[key]
			if t == nil {
				t = &tally{}
				by[key] = t
			}
			switch res {
			case "skip":
				t.skips++
				continue
			case "pass":
				t.passes++
			default:
				fails = append(fails, fmt.Sprintf("%s in %s: %s", strings.TrimPrefix(key, module+"/"), r.file, r.reason[key]))
			}
			t.runs++
		}
	}
	fmt.Fprintf(w, "| gating lab test | runs | passes | skips |\n|---|---|---|---|\n")
	worst := 0
	for _, k := range sortedKeys(by) {
		t := by[k]
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", strings.TrimPrefix(k, module+"/"), t.runs, t.passes, t.skips)
		worst = max(worst, t.runs-t.passes)
	}
	for _, f := range fails {
		fmt.Fprintf(w, "\nFAILED %s", f)
	}
	fmt.Fprintf(w, "\n%d gating lab tests over %d runs; the most failures of one test: %d\n", len(by), len(runs), worst)
	return nil
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
