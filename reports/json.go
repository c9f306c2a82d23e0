package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rfc2544/rfc2544/internal/fileio"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// WriteJSON writes res as the versioned results file (results.json): indented
// JSON, the schema field set to rfc2544.SchemaVersion, text as written
// ("A->B", not "A-\u003eB": no HTML escaping). Every field is documented in
// reports/SCHEMA.md.
func WriteJSON(w io.Writer, res *rfc2544.Results) error {
	out := *res
	out.Schema = rfc2544.SchemaVersion
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// ReadResults reads a results file written by WriteJSON, of this schema or an
// older one. A file from a newer schema, with no schema, or with corrupt
// JSON is refused with an error that says where and what: the file's schema
// and ours, or the line and column of the syntax error.
func ReadResults(r io.Reader) (*rfc2544.Results, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("results file is empty: expected the JSON written by 'rfc2544 run' (results.json)")
	}
	var head struct {
		Schema *json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, jsonError(b, err)
	}
	if head.Schema == nil {
		return nil, errors.New("results file has no \"schema\" field: it is not an rfc2544 results file (results.json)")
	}
	var schema int
	if err := json.Unmarshal(*head.Schema, &schema); err != nil {
		return nil, fmt.Errorf("results file schema %s: want a whole number such as %d", *head.Schema, rfc2544.SchemaVersion)
	}
	switch {
	case schema > rfc2544.SchemaVersion:
		return nil, fmt.Errorf("results file has schema %d, newer than schema %d that this rfc2544 reads: upgrade rfc2544 to read it",
			schema, rfc2544.SchemaVersion)
	case schema < 1:
		return nil, fmt.Errorf("results file schema %d: schemas start at 1 (this rfc2544 reads 1 to %d)", schema, rfc2544.SchemaVersion)
	}
	res := new(rfc2544.Results)
	if err := json.Unmarshal(b, res); err != nil {
		return nil, jsonError(b, err)
	}
	if schema == 1 {
		if err := fromSchema1(b, res); err != nil {
			return nil, err
		}
	}
	if err := res.RegisterMixes(); err != nil {
		return nil, fmt.Errorf("results file: %w", err)
	}
	return res, nil
}

// fromSchema1 reads the fields schema 2 renamed: throughput[].fps is
// throughput[].throughput_fps, the name the CSV always had.
func fromSchema1(b []byte, res *rfc2544.Results) error {
	var v1 struct {
		Throughput []struct {
			FPS float64 `json:"fps"`
		} `json:"throughput"`
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		return jsonError(b, err)
	}
	for i := range min(len(v1.Throughput), len(res.Throughput)) {
		res.Throughput[i].FPS = v1.Throughput[i].FPS
	}
	return nil
}

// MaxResultsBytes bounds the results file ReadResultsFile reads: a full run
// with latency histograms is a few megabytes.
const MaxResultsBytes = 256 << 20

// ReadResultsFile reads the results file at path: a regular file of at most
// MaxResultsBytes (a FIFO, a device or a folder is refused before it is
// read). Errors name the file.
func ReadResultsFile(path string) (*rfc2544.Results, error) {
	f, r, err := fileio.OpenBounded(path, MaxResultsBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("open results file: %w", err)
		}
		return nil, fmt.Errorf("results file %s: %w", path, err)
	}
	defer f.Close()
	res, err := ReadResults(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// jsonError turns a decoding error into one that gives the line and column
// (and byte offset) of the problem in b.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(b, syn.Offset)
		return fmt.Errorf("results file is not valid JSON at line %d, column %d (byte %d): %w", line, col, syn.Offset, err)
	case errors.As(err, &typ):
		line, col := lineCol(b, typ.Offset)
		return fmt.Errorf("results file field %q at line %d, column %d (byte %d): JSON %s where a %s belongs: %w",
			typ.Field, line, col, typ.Offset, typ.Value, typ.Type, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(b, int64(len(b)))
		return fmt.Errorf("results file ends early at line %d, column %d (byte %d): truncated JSON: %w", line, col, len(b), err)
	}
	return fmt.Errorf("results file: %w", err)
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(b []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}
