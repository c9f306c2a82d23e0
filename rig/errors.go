package rig

import (
	"fmt"
	"strconv"
)

// InputError is bad input: a setting that cannot work, found before anything
// is created or sent. Its message names the setting (as the command's flag),
// the value and the fix.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputf(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }

// quote is strconv.Quote of s cut to about 100 bytes, so a bad value of
// megabytes does not flood the terminal.
func quote(s string) string {
	const max = 100
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
