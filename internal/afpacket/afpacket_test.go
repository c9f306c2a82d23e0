package afpacket

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStats(t *testing.T) {
	le := func(p, d uint32) []byte {
		b := make([]byte, 8)
		binary.NativeEndian.PutUint32(b, p)
		binary.NativeEndian.PutUint32(b[4:], d)
		return b
	}
	tests := []struct {
		name    string
		in      []byte
		want    Stats
		wantErr bool
	}{
		{name: "nothing", in: le(0, 0)},
		{name: "packets include drops", in: le(1000, 10), want: Stats{Packets: 990, Drops: 10}},
		{name: "all dropped", in: le(5, 5), want: Stats{Drops: 5}},
		{name: "short", in: []byte{1, 2, 3}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStats(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseStats (-want +got):\n%s", diff)
			}
		})
	}
	if got := (Stats{1, 2}).Add(Stats{10, 20}); got != (Stats{11, 22}) {
		t.Errorf("Add = %+v", got)
	}
}
