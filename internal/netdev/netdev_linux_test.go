package netdev

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSpeed reads struct ethtool_cmd's speed from its two halves.
func TestSpeed(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lo, hi   uint16
		wantMbps int
	}{
		{"1G", 1000, 0, 1000},
		{"100G", 100000 & 0xffff, 100000 >> 16, 100000},
		{"unknown", 0xffff, 0xffff, 0},
		{"zero", 0, 0, 0},
		{"16-bit unknown", 0xffff, 0, 0},
	} {
		cmd := make([]byte, ethtoolCmdLen)
		binary.NativeEndian.PutUint16(cmd[12:], tt.lo)
		binary.NativeEndian.PutUint16(cmd[28:], tt.hi)
		if got := speed(cmd); got != tt.wantMbps {
			t.Errorf("%s: speed %d, want %d", tt.name, got, tt.wantMbps)
		}
	}
}

// TestInspectLoopback inspects the host's lo: it exists, is up, has no
// default route and an MTU; a missing interface and namespace are the
// sentinel errors.
func TestInspectLoopback(t *testing.T) {
	info, err := Inspect("", "lo")
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("netlink: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !info.Up || info.MTU <= 0 || info.CarriesDefault || info.Index <= 0 {
		t.Errorf("lo: %+v, want up, an MTU and an index, no default route", info)
	}
	if _, err := Inspect("", "nosuch0"); !errors.Is(err, ErrNoInterface) {
		t.Errorf("missing interface: %v, want ErrNoInterface", err)
	}
	if _, err := Inspect("nosuchns-netdev", "lo"); !errors.Is(err, ErrNoNamespace) {
		t.Errorf("missing namespace: %v, want ErrNoNamespace", err)
	}
}

// TestEthtoolDrvinfo: an ethtool command on a missing interface answers
// the errno (ENODEV), unwrapped enough for errors.Is.
func TestEthtoolDrvinfo(t *testing.T) {
	cmd := make([]byte, ethtoolDrvinfoLen)
	binary.NativeEndian.PutUint32(cmd, 3) // ETHTOOL_GDRVINFO
	err := Ethtool("", "nosuch0", func(do func([]byte) error) error { return do(cmd) })
	if !errors.Is(err, unix.ENODEV) {
		t.Errorf("missing interface: %v, want ENODEV", err)
	}
}
