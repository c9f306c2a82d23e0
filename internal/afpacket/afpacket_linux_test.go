//go:build linux

package afpacket

import "testing"

func TestMemRingSlots(t *testing.T) {
	r := NewMemRing(256, 4)
	if got := len(r.TxData(3)); got != 256-32 {
		t.Errorf("TxData len %d, want 224", got)
	}
	r.SetTxLen(1, 60)
	r.SetStatus(1, StatusSendRequest)
	if r.Status(1) != StatusSendRequest || r.Status(0) != StatusAvailable {
		t.Errorf("status words mixed up: %d %d", r.Status(0), r.Status(1))
	}
	for _, tt := range []struct{ n, want int }{{60, 128}, {96, 128}, {97, 256}, {1514, 2048}, {8996, 16384}} {
		if got := SlotSize(tt.n); got != tt.want {
			t.Errorf("SlotSize(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}
