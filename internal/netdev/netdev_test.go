package netdev

import "testing"

func TestLineRateBps(t *testing.T) {
	for _, tt := range []struct {
		info        Info
		want        float64
		wantNominal bool
	}{
		{Info{Kind: "veth"}, NominalVethBps, true},
		{Info{Driver: "veth", SpeedMbps: 10000}, NominalVethBps, true},
		{Info{Driver: "ixgbe", SpeedMbps: 10000}, 10e9, false},
		{Info{Driver: "virtio_net"}, 0, false},
	} {
		if got, nominal := tt.info.LineRateBps(); got != tt.want || nominal != tt.wantNominal {
			t.Errorf("%+v: %g (nominal %v), want %g (%v)", tt.info, got, nominal, tt.want, tt.wantNominal)
		}
	}
}
