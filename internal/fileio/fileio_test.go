package fileio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFiles: all files land with mode 0644, or none does (the old
// contents stay and no temporary file is left).
func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	if err := WriteFiles(dir, []File{{Name: "a.json", Write: text("a1")}, {Name: "b.txt", Write: text("b1")}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.json", "b.txt"} {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v, mode %v; want 0644", n, err, st.Mode().Perm())
		}
	}
	tracked := false
	track := func(cleanup func()) func() { tracked = true; return func() {} }
	boom := errors.New("boom")
	err := WriteFiles(dir, []File{{Name: "a.json", Write: text("a2")}, {Name: "b.txt", Write: func(io.Writer) error { return boom }}}, track)
	if !errors.Is(err, boom) || !tracked {
		t.Fatalf("failed write: %v (tracked %v), want boom", err, tracked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.json")); string(b) != "a1" {
		t.Errorf("a.json after a failed write: %q, want the old a1", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d files in the folder, want 2 (no temporary left)", len(ents))
	}
}
