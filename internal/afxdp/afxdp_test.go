package afxdp

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{Interface: "p1", TX: true}
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error, "" for none
	}{
		{"defaults", ok, ""},
		{"no interface", Config{TX: true}, "interface: not set"},
		{"no direction", Config{Interface: "p1"}, "rx and tx"},
		{"frames not power of two", Config{Interface: "p1", TX: true, Frames: 1000}, "frames 1000"},
		{"chunk", Config{Interface: "p1", TX: true, ChunkSize: 3000}, "chunk size 3000"},
		{"ring", Config{Interface: "p1", TX: true, RingSize: 100}, "ring size 100"},
		{"queue", Config{Interface: "p1", TX: true, Queue: -1}, "queue -1"},
		{"generic zero-copy", Config{Interface: "p1", RX: true, XDPMode: XDPGeneric, CopyMode: ZeroCopyForce}, "generic with zero-copy"},
		{"bad mode", Config{Interface: "p1", RX: true, XDPMode: 9}, "xdp mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestNotSupportedNamesFallback(t *testing.T) {
	err := notSupported("the kernel has no %s", "AF_XDP")
	if !errors.Is(err, ErrNotSupported) {
		t.Fatalf("%v does not wrap ErrNotSupported", err)
	}
	if !strings.Contains(err.Error(), "the kernel has no AF_XDP") || !strings.Contains(err.Error(), "raw transport") {
		t.Errorf("error %q should name what is missing and the raw fallback", err)
	}
}

func TestFeaturesString(t *testing.T) {
	f := Features{XDPMode: "native", NeedWakeup: true, TxBudget: 2048, RxTimestamp: "xdp"}
	if got, want := f.String(), "native, copy, need-wakeup, tx budget 2048, rx time xdp"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := MaxFrameSize(2048); got != 1780 {
		t.Errorf("MaxFrameSize(2048) = %d, want 1780", got)
	}
}
