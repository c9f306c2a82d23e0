// Package quote quotes a user's value for an error message, cut short: a
// bad value of megabytes (a plan field, a flag) must not flood the terminal.
package quote

import (
	"fmt"
	"strconv"
)

// Max is about how many bytes of a value Short keeps.
const Max = 100

// Short is strconv.Quote of s cut to about Max bytes (at a rune start), with
// the value's length when cut: "abc..." (512000 bytes).
func Short(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	cut := Max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}
