package reports

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/rfc2544"
)

var (
	update   = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current renderers")
	fixtures = flag.Bool("fixtures", false, "rewrite only the results files in ../testdata/results from the fixture model (-update does too)")
)

// fixturePath is the results file of a fixture run, shared with the CLI tests.
func fixturePath(name string) string {
	return filepath.Join("..", "testdata", "results", "mtu"+name+".json")
}

// loadFixture reads a fixture results file as the CLI would. With -update
// or -fixtures, it first rewrites it from the model.
func loadFixture(t *testing.T, m model) *rfc2544.Results {
	t.Helper()
	path := fixturePath(m.name)
	if *fixtures || *update {
		res, err := buildFixture(m)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, res); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ReadResultsFile(path)
	if err != nil {
		t.Fatalf("read fixture (regenerate with -fixtures): %v", err)
	}
	return res
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (create it with go test ./reports -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got; go test ./reports -update to accept):\n%s", name, diff)
	}
}
