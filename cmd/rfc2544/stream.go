package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// jsonStream writes --json-stream events to stdout, one line each, as they
// happen. A stream that cannot be written is an error of the run (the
// consumer is gone).
type jsonStream struct {
	w   io.Writer
	err error
}

func (s *jsonStream) emit(v any) error {
	if s == nil || s.err != nil {
		return nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.err = fmt.Errorf("--json-stream: encode %T: %w", v, err)
		return s.err
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		s.err = fmt.Errorf("--json-stream: write to stdout: %w", err)
		return s.err
	}
	return nil
}
