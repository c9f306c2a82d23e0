package rig

import "fmt"

// InputError is bad input: a setting that cannot work, found before anything
// is created or sent. Its message names the setting (as the command's flag),
// the value and the fix.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputf(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }
