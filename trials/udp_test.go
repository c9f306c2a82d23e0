package trials

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/framing"
)

// TestFlowReordering: with several flows, reordering is judged per flow
// (frame n belongs to flow n mod Flows): frames of different flows
// overtaking each other are not reordered, a frame behind a later frame of
// its own flow is.
func TestFlowReordering(t *testing.T) {
	tests := []struct {
		name          string
		flows         int
		seqs          []uint64
		wantReordered uint64
	}{
		{name: "one flow, swap", flows: 1, seqs: []uint64{0, 2, 1, 3}, wantReordered: 1},
		{name: "two flows, cross-flow swap", flows: 2, seqs: []uint64{0, 2, 1, 3}, wantReordered: 0},
		{name: "two flows, in-flow swap", flows: 2, seqs: []uint64{2, 0, 1, 3}, wantReordered: 1},
		{name: "four flows, one queue late", flows: 4, seqs: []uint64{0, 1, 2, 4, 5, 6, 3, 7}, wantReordered: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newStreamState(Stream{ID: 1, Direction: AtoB, Flows: tt.flows})
			tr := newRxTrial(3, 64, []*streamState{st})
			p := make([]byte, framing.SignatureLen)
			for _, s := range tt.seqs {
				framing.EncodeSignature(p, framing.Signature{RunID: 3, StreamID: 1, Seq: s, TxNs: 1})
				tr.count(p, true, 10)
			}
			got := []uint64{st.received, st.reordered}
			if diff := cmp.Diff([]uint64{uint64(len(tt.seqs)), tt.wantReordered}, got); diff != "" {
				t.Errorf("received, reordered (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUDPConfigValidate(t *testing.T) {
	a4 := netip.MustParseAddr("198.18.1.2")
	b4 := netip.MustParseAddr("198.19.1.2")
	tests := []struct {
		name    string
		cfg     UDPConfig
		wantErr string
	}{
		{name: "ok", cfg: UDPConfig{A: UDPPortConfig{Addr: a4}, B: UDPPortConfig{Addr: b4}}},
		{name: "loopback ok", cfg: UDPConfig{A: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1")}, B: UDPPortConfig{Addr: netip.MustParseAddr("127.0.0.1")}}},
		{name: "no address", cfg: UDPConfig{B: UDPPortConfig{Addr: b4}}, wantErr: "udp port a: no addr or addr6"},
		{name: "v6 in addr", cfg: UDPConfig{A: UDPPortConfig{Addr: netip.MustParseAddr("2001:2::1")}, B: UDPPortConfig{Addr: b4}}, wantErr: "want an IPv4 address"},
		{name: "outside range", cfg: UDPConfig{A: UDPPortConfig{Addr: netip.MustParseAddr("10.0.0.1")}, B: UDPPortConfig{Addr: b4}}, wantErr: "RFC 6815"},
		{name: "outside range allowed", cfg: UDPConfig{A: UDPPortConfig{Addr: netip.MustParseAddr("10.0.0.1")}, B: UDPPortConfig{Addr: b4}, AllowAnyDestination: true}},
		{name: "same socket", cfg: UDPConfig{A: UDPPortConfig{Addr: a4, Port: 9000}, B: UDPPortConfig{Addr: a4, Port: 9000}}, wantErr: "same address and port"},
		{name: "mtu", cfg: UDPConfig{A: UDPPortConfig{Addr: a4}, B: UDPPortConfig{Addr: b4}, PathMTU: 500}, wantErr: "path_mtu 500"},
		{name: "batch", cfg: UDPConfig{A: UDPPortConfig{Addr: a4}, B: UDPPortConfig{Addr: b4}, Batch: 1000}, wantErr: "batch 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
