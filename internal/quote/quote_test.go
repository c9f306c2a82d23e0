package quote

import (
	"strings"
	"testing"
)

func TestShort(t *testing.T) {
	if got := Short("abc"); got != `"abc"` {
		t.Errorf("Short(abc) = %s", got)
	}
	long := strings.Repeat("é", 300) // 600 bytes, 2 a rune
	got := Short(long)
	if !strings.HasSuffix(got, "... (600 bytes)") || strings.Contains(got, `\x`) || len(got) > Max+30 {
		t.Errorf("Short(600 bytes) = %s", got)
	}
}
