// Package notsupported holds the module's one "not supported" sentinel:
// trials.ErrNotSupported is this value, and the internal packages below
// trials wrap it, so errors.Is(err, trials.ErrNotSupported) holds for every
// error about something this system lacks.
package notsupported

import "errors"

// Err is the sentinel; wrap it with %w and say what is missing.
var Err = errors.New("not supported")
