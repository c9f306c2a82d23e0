package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/rfc2544/rfc2544", Version: "v0.2.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "891bfcf0123456789abc"}, {Key: "vcs.time", Value: "2026-11-30T22:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := Describe(bi, true), "rfc2544 v0.2.0, commit 891bfcf01234+dirty (2026-11-30T22:00:00Z), go1.26.8"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	bi.Settings, bi.Main.Version = nil, ""
	if got := Describe(bi, true); !strings.HasPrefix(got, "rfc2544 (devel), no VCS revision") || !strings.HasSuffix(got, "go1.26.8") {
		t.Errorf("devel build: %q", got)
	}
	if got := Describe(nil, false); got != "rfc2544 (no build information)" {
		t.Errorf("no build information: %q", got)
	}
}

func TestToolOf(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "891bfcf0123456789abc"}}
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"none", nil, "rfc2544"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "rfc2544 v0.2.0"},
		{"revision wins", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}, Settings: rev}, "rfc2544 891bfcf01234"},
		{"devel", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "rfc2544 (devel)"},
		{"empty", &debug.BuildInfo{}, "rfc2544 (devel)"},
	} {
		if got := ToolOf(tt.bi, tt.bi != nil); got != tt.want {
			t.Errorf("%s: ToolOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
