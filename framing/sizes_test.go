package framing

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSizes(t *testing.T) {
	type sizes struct {
		Overhead, Payload, IPPacket, PayloadOffset, Min int
		MaxForMTU1500, MaxForMTU9000, MaxForMTU1280     int
	}
	tests := []struct {
		name  string
		proto Proto
		vlan  bool
		frame int
		want  sizes
	}{
		{
			// RFC 2544 App. C: IP total length F−18, UDP payload F−46.
			name: "IPv4/UDP 64", proto: IPv4UDP, frame: 64,
			want: sizes{Overhead: 46, Payload: 18, IPPacket: 46, PayloadOffset: 42, Min: 64,
				MaxForMTU1500: 1518, MaxForMTU9000: 9018, MaxForMTU1280: 1298},
		},
		{
			name: "IPv4/UDP 1518 tagged", proto: IPv4UDP, vlan: true, frame: 1518,
			want: sizes{Overhead: 50, Payload: 1468, IPPacket: 1496, PayloadOffset: 46, Min: 68,
				MaxForMTU1500: 1522, MaxForMTU9000: 9022, MaxForMTU1280: 1302},
		},
		{
			// RFC 5180: UDP payload F−66.
			name: "IPv6/UDP 128", proto: IPv6UDP, frame: 128,
			want: sizes{Overhead: 66, Payload: 62, IPPacket: 110, PayloadOffset: 62, Min: 84,
				MaxForMTU1500: 1518, MaxForMTU9000: 9018, MaxForMTU1280: 1298},
		},
		{
			name: "IPv6/UDP 9216 tagged", proto: IPv6UDP, vlan: true, frame: 9216,
			want: sizes{Overhead: 70, Payload: 9146, IPPacket: 9194, PayloadOffset: 66, Min: 88,
				MaxForMTU1500: 1522, MaxForMTU9000: 9022, MaxForMTU1280: 1302},
		},
		{
			name: "unknown proto", proto: 0, frame: 64,
			want: sizes{Overhead: 0, Payload: 64, IPPacket: 46},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sizes{
				Overhead:      HeaderOverhead(tt.proto, tt.vlan),
				Payload:       UDPPayloadSize(tt.frame, tt.proto, tt.vlan),
				IPPacket:      IPPacketSize(tt.frame, tt.vlan),
				PayloadOffset: UDPPayloadOffset(tt.proto, tt.vlan),
				Min:           MinFrameSize(tt.proto, tt.vlan),
				MaxForMTU1500: MaxFrameForMTU(1500, tt.proto, tt.vlan),
				MaxForMTU9000: MaxFrameForMTU(9000, tt.proto, tt.vlan),
				MaxForMTU1280: MaxFrameForMTU(1280, tt.proto, tt.vlan),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sizes (-want +got):\n%s", diff)
			}
			if tt.proto != 0 {
				if back := FrameSizeForPayload(got.Payload, tt.proto, tt.vlan); back != tt.frame {
					t.Errorf("FrameSizeForPayload(%d) = %d, want %d", got.Payload, back, tt.frame)
				}
			}
		})
	}
}

func TestMaxFrameForMTU(t *testing.T) {
	tests := []struct {
		name  string
		mtu   int
		proto Proto
		vlan  bool
		want  int
	}{
		{name: "jumbo MTU capped at MaxJumbo", mtu: 65535, proto: IPv4UDP, want: MaxJumbo},
		{name: "9198 is exactly MaxJumbo", mtu: 9198, proto: IPv6UDP, want: 9216},
		{name: "tagged 9194 is exactly MaxJumbo", mtu: 9194, proto: IPv4UDP, vlan: true, want: 9216},
		{name: "IPv4 MTU 46 fits 64", mtu: 46, proto: IPv4UDP, want: 64},
		{name: "IPv4 MTU 45 fits nothing", mtu: 45, proto: IPv4UDP, want: 0},
		{name: "IPv6 MTU 65 fits nothing", mtu: 65, proto: IPv6UDP, want: 0},
		{name: "IPv6 MTU 66 fits 84", mtu: 66, proto: IPv6UDP, want: 84},
		{name: "unknown proto", mtu: 1500, proto: 3, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaxFrameForMTU(tt.mtu, tt.proto, tt.vlan); got != tt.want {
				t.Errorf("MaxFrameForMTU(%d, %v, %v) = %d, want %d", tt.mtu, tt.proto, tt.vlan, got, tt.want)
			}
		})
	}
}

func TestValidateFrameSize(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		proto     Proto
		vlan      bool
		mtu       int
		wantErr   error // sentinel, nil for success
		wantLimit int
		wantMsg   []string // substrings of the message
	}{
		{name: "IPv4 64 ok", size: 64, proto: IPv4UDP, mtu: 1500},
		{name: "IPv4 1518 at MTU 1500 ok", size: 1518, proto: IPv4UDP, mtu: 1500},
		{name: "tagged 1522 at MTU 1500 ok", size: 1522, proto: IPv4UDP, vlan: true, mtu: 1500},
		{name: "9216 with no MTU check ok", size: 9216, proto: IPv6UDP},
		{name: "IPv6 84 ok", size: 84, proto: IPv6UDP, mtu: 1280},
		{
			name: "IPv4 63 too small", size: 63, proto: IPv4UDP, wantErr: ErrFrameTooSmall, wantLimit: 64,
			wantMsg: []string{"frame size 63", "64 bytes", "IPv4/UDP", "at least 64"},
		},
		{
			name: "IPv4 tagged 64 too small", size: 64, proto: IPv4UDP, vlan: true, wantErr: ErrFrameTooSmall, wantLimit: 68,
			wantMsg: []string{"frame size 64", "802.1Q", "at least 68"},
		},
		{
			name: "IPv6 64 too small", size: 64, proto: IPv6UDP, wantErr: ErrFrameTooSmall, wantLimit: 84,
			wantMsg: []string{"frame size 64", "IPv6/UDP", "at least 84"},
		},
		{
			name: "IPv6 78 too small for the signature", size: 78, proto: IPv6UDP, wantErr: ErrFrameTooSmall, wantLimit: 84,
			wantMsg: []string{"18-byte test signature"},
		},
		{
			name: "negative", size: -1, proto: IPv4UDP, wantErr: ErrFrameTooSmall, wantLimit: 64,
			wantMsg: []string{"frame size -1"},
		},
		{
			name: "above jumbo", size: 9217, proto: IPv4UDP, wantErr: ErrFrameTooLarge, wantLimit: 9216,
			wantMsg: []string{"frame size 9217", "at most 9216"},
		},
		{
			name: "1519 above MTU 1500", size: 1519, proto: IPv4UDP, mtu: 1500, wantErr: ErrAboveMTU, wantLimit: 1518,
			wantMsg: []string{"frame size 1519", "path MTU 1500", "at most 1518", "14 Ethernet header + 4 FCS", "at least 1501"},
		},
		{
			name: "tagged 1523 above MTU 1500", size: 1523, proto: IPv4UDP, vlan: true, mtu: 1500, wantErr: ErrAboveMTU, wantLimit: 1522,
			wantMsg: []string{"path MTU 1500", "at most 1522", "802.1Q tag"},
		},
		{
			name: "9018 fits MTU 9000", size: 9018, proto: IPv6UDP, mtu: 9000,
		},
		{
			name: "9216 above MTU 9000", size: 9216, proto: IPv6UDP, mtu: 9000, wantErr: ErrAboveMTU, wantLimit: 9018,
			wantMsg: []string{"path MTU 9000", "at most 9018", "at least 9198"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateFrameSize(tt.size, tt.proto, tt.vlan, tt.mtu)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ValidateFrameSize(%d) = %v, want nil", tt.size, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ValidateFrameSize(%d) = %v, want errors.Is %v", tt.size, err, tt.wantErr)
			}
			for _, other := range []error{ErrFrameTooSmall, ErrFrameTooLarge, ErrAboveMTU} {
				if other != tt.wantErr && errors.Is(err, other) {
					t.Errorf("error also matches %v", other)
				}
			}
			var fe *FrameSizeError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FrameSizeError", err)
			}
			if fe.Limit != tt.wantLimit || fe.Size != tt.size {
				t.Errorf("FrameSizeError size %d limit %d, want %d and %d", fe.Size, fe.Limit, tt.size, tt.wantLimit)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not contain %q", err, m)
				}
			}
		})
	}
	if err := ValidateFrameSize(64, 0, false, 0); err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Errorf("unknown proto: got %v, want an error naming the protocol", err)
	}
}

// TestMinFrameSizeIsTight checks that MinFrameSize is the boundary:
// it validates, one byte less does not, and its payload holds the signature.
func TestMinFrameSizeIsTight(t *testing.T) {
	for _, p := range []Proto{IPv4UDP, IPv6UDP} {
		for _, vlan := range []bool{false, true} {
			m := MinFrameSize(p, vlan)
			if err := ValidateFrameSize(m, p, vlan, 1500); err != nil {
				t.Errorf("%v vlan=%v: min %d: %v", p, vlan, m, err)
			}
			if err := ValidateFrameSize(m-1, p, vlan, 1500); !errors.Is(err, ErrFrameTooSmall) {
				t.Errorf("%v vlan=%v: %d: got %v, want ErrFrameTooSmall", p, vlan, m-1, err)
			}
			if pl := UDPPayloadSize(m, p, vlan); pl < SignatureLen {
				t.Errorf("%v vlan=%v: payload %d < signature", p, vlan, pl)
			}
		}
	}
}

func TestStandardSizes(t *testing.T) {
	if diff := cmp.Diff([]int{64, 128, 256, 512, 1024, 1280, 1518}, StandardSizes); diff != "" {
		t.Errorf("StandardSizes (-want +got):\n%s", diff)
	}
	for _, s := range append(append([]int(nil), StandardSizes...), JumboSizes...) {
		if err := ValidateFrameSize(s, IPv4UDP, false, 0); err != nil {
			t.Errorf("size %d: %v", s, err)
		}
	}
	if err := ValidateFrameSize(9018, IPv4UDP, false, 9000); err != nil {
		t.Errorf("9018 on MTU 9000: %v", err)
	}
}

func TestProtoString(t *testing.T) {
	got := []string{IPv4UDP.String(), IPv6UDP.String(), Proto(0).String()}
	if diff := cmp.Diff([]string{"IPv4/UDP", "IPv6/UDP", "Proto(0)"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
