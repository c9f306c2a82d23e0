//go:build !linux

package trials

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/rfc2544/rfc2544/internal/nsutil"
)

// TestNotSupported: off Linux every entry point of the transports fails with
// an error matching ErrNotSupported.
func TestNotSupported(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, Config{})
	check := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, ErrNotSupported) {
			t.Errorf("%s: %v, want an error matching ErrNotSupported", name, err)
		}
	}
	check("Open", err)
	_, err = Generate(ctx, GenConfig{})
	check("Generate", err)
	_, err = Calibrate(ctx, Config{}, []int{64}, 1)
	check("Calibrate", err)
	_, err = (&Engine{}).Run(ctx, Spec{})
	check("Engine.Run", err)
	_, err = OpenUDP(ctx, UDPConfig{A: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1")}, B: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1")}})
	check("OpenUDP", err)
	_, err = (&UDPEngine{}).Run(ctx, Spec{})
	check("UDPEngine.Run", err)
	_, err = RemotePort{}.Receive(Spec{}, 1, RemoteReceive{})
	check("RemotePort.Receive", err)
	_, err = RemotePort{}.Send(ctx, Spec{}, 1, RemoteSend{})
	check("RemotePort.Send", err)
	_, err = NewRemote(RemoteConfig{}, nil)
	check("NewRemote", err)
	_, err = (&RemoteEngine{}).Run(ctx, Spec{})
	check("RemoteEngine.Run", err)
	_, err = ReadPause("", "eth0")
	check("ReadPause", err)
	check("nsutil.Do", nsutil.Do("ns", func() error { return nil }))
}
