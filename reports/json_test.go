package reports

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rfc2544/rfc2544/rfc2544"
)

// TestJSONRoundTrip checks that the fixture results files are exactly what
// WriteJSON writes for what ReadResults reads: nothing is lost or reordered.
func TestJSONRoundTrip(t *testing.T) {
	for _, m := range []model{fixture1500, fixture9000} {
		t.Run(m.name, func(t *testing.T) {
			res := loadFixture(t, m)
			var b bytes.Buffer
			if err := WriteJSON(&b, res); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(fixturePath(m.name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, b.Bytes()) {
				t.Errorf("WriteJSON(ReadResults(%s)) differs from the file: %s", fixturePath(m.name),
					cmp.Diff(string(want), b.String()))
			}
		})
	}
}

func TestWriteJSONStampsSchema(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, &rfc2544.Results{Tool: "t"}); err != nil {
		t.Fatal(err)
	}
	res, err := ReadResults(&b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Schema != rfc2544.SchemaVersion {
		t.Errorf("schema = %d, want %d", res.Schema, rfc2544.SchemaVersion)
	}
}

func TestReadResultsErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"empty", "  \n", []string{"results file is empty"}},
		{"not json", "throughput: 5\n", []string{"not valid JSON at line 1, column 2"}},
		{"corrupt at line 3", "{\n  \"schema\": 1,\n  \"tool\": \"x\",,\n}", []string{"not valid JSON at line 3, column 15", "byte 32"}},
		{"truncated", "{\n  \"schema\": 1,\n  \"tool\": \"x\"", []string{"not valid JSON at line 3", "unexpected end of JSON input"}},
		{"trailing garbage", "{\"schema\": 1} x", []string{"not valid JSON at line 1, column 15"}},
		{"newer schema", `{"schema": 99, "tool": "rfc2544 v9"}`, []string{"schema 99", "newer than schema 2", "upgrade rfc2544"}},
		{"no schema", `{"tool": "iperf3"}`, []string{"no \"schema\" field", "not an rfc2544 results file"}},
		{"schema zero", `{"schema": 0}`, []string{"schema 0", "start at 1"}},
		{"schema not a number", `{"schema": "one"}`, []string{`schema "one"`, "whole number"}},
		{"wrong type", "{\"schema\": 1,\n \"throughput\": [{\"frame_size\": \"64\"}]}", []string{`field "throughput.frame_size"`, "line 2", "string where a int belongs"}},
		{"bad direction", `{"schema": 1, "throughput": [{"trials": [{"result": {"streams": [{"direction": "up"}]}}]}]}`, []string{`invalid direction "up"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ReadResults(strings.NewReader(tt.input))
			if err == nil {
				t.Fatalf("ReadResults = %+v, want an error", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestReadResultsFileErrors(t *testing.T) {
	_, err := ReadResultsFile("testdata/does-not-exist.json")
	if err == nil || !os.IsNotExist(unwrapAll(err)) || !strings.Contains(err.Error(), "testdata/does-not-exist.json") {
		t.Errorf("missing file: error %v, want a not-exist error naming the file", err)
	}
	dir := t.TempDir()
	path := dir + "/new.json"
	if err := os.WriteFile(path, []byte(`{"schema": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadResultsFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), "schema 3") {
		t.Errorf("newer file: error %v, want it to start with the path and name the schema", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

// FuzzReadResults: ReadResults never panics, and what it accepts survives
// a WriteJSON/ReadResults round trip unchanged.
func FuzzReadResults(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "tool": "rfc2544", "throughput": [{"frame_size": 64, "found": true, "fps": 1000, "trials": []}]}`))
	f.Add([]byte(`{"schema": 1, "latency": [{"frame_size": 64, "summary": {"count": 3, "buckets": [{"up_to_ns": 5, "cumulative": 3}]}}]}`))
	f.Add([]byte(`{"schema": 2}`))
	f.Add([]byte(`{"schema": 1,, }`))
	f.Add([]byte(`{"schema": 1, "plan": {"trial": {"duration": "1s"}}, "back_to_back": [{"burst_frames": [1, 2]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := ReadResults(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteJSON(&out, res); err != nil {
			return // e.g. NaN cannot be written; not a reader bug
		}
		first := bytes.Clone(out.Bytes())
		again, err := ReadResults(&out)
		if err != nil {
			t.Fatalf("ReadResults accepted %q but not its own WriteJSON output: %v", b, err)
		}
		var out2 bytes.Buffer
		if err := WriteJSON(&out2, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, out2.Bytes()) {
			t.Fatalf("round trip changed the file:\n%s", cmp.Diff(string(first), out2.String()))
		}
	})
}

// TestSchema1Reads: a schema 1 file's throughput fps (renamed
// throughput_fps in schema 2) still reads.
func TestSchema1Reads(t *testing.T) {
	res, err := ReadResults(strings.NewReader(`{"schema": 1, "throughput": [{"frame_size": 64, "found": true, "fps": 1000, "trials": []}]}`))
	if err != nil || len(res.Throughput) != 1 || res.Throughput[0].FPS != 1000 {
		t.Fatalf("schema 1: %+v, %v", res, err)
	}
	res, err = ReadResults(strings.NewReader(`{"schema": 2, "throughput": [{"frame_size": 64, "found": true, "throughput_fps": 2000, "fps": 1000}]}`))
	if err != nil || res.Throughput[0].FPS != 2000 {
		t.Fatalf("schema 2: %+v, %v", res, err)
	}
}

// TestJSONNotHTMLEscaped: directions and notes read as written.
func TestJSONNotHTMLEscaped(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, `\u003e`) || strings.Contains(s, `\u003c`) || strings.Contains(s, `\u0026`) || !strings.Contains(s, `"A->B"`) {
		t.Error("results.json escapes HTML characters or lacks \"A->B\"")
	}
}
