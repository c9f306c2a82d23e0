package reports

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestFixturesFresh fails when a results file in ../testdata/results is not
// what the current Runner writes for its model (fixture_test.go): renderers
// tested on a stale file are tested on results no run produces any more.
// Regenerate with: go test ./reports -update (rewrites the results files,
// then the golden files rendered from them).
func TestFixturesFresh(t *testing.T) {
	for _, m := range []model{fixture1500, fixture9000} {
		t.Run(m.name, func(t *testing.T) {
			res, err := buildFixture(m)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := WriteJSON(&want, res); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(fixturePath(m.name))
			if err != nil {
				t.Fatalf("read fixture (create it with go test ./reports -update): %v", err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s is stale: the Runner now writes something else for its model (%s); regenerate with go test ./reports -update",
					fixturePath(m.name), firstDiff(got, want.Bytes()))
			}
		})
	}
}

// firstDiff names the first line where a and b differ.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < min(len(la), len(lb)); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: file %q, now %q", i+1, strings.TrimSpace(la[i]), strings.TrimSpace(lb[i]))
		}
	}
	return fmt.Sprintf("file has %d lines, now %d", len(la), len(lb))
}
