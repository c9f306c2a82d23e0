package relay

import "testing"

func TestShaper(t *testing.T) {
	var s shaper
	const rate = 8e6 // 1 byte per µs
	// A 1000-byte frame on an idle link leaves 1 ms later.
	if d, ok := s.admit(0, 1000, rate, 3); !ok || d != 1_000_000 {
		t.Fatalf("first frame departs %d, %v; want 1e6 ns", d, ok)
	}
	// Two more queue behind it; the fourth finds three waiting.
	for i, want := range []int64{2_000_000, 3_000_000} {
		if d, ok := s.admit(10, 1000, rate, 3); !ok || d != want {
			t.Fatalf("frame %d departs %d, %v; want %d", i+2, d, ok, want)
		}
	}
	if _, ok := s.admit(20, 1000, rate, 3); ok {
		t.Fatal("a fourth frame was admitted to a queue of 3")
	}
	// Once the first has left there is room, behind the third.
	if d, ok := s.admit(1_000_000, 500, rate, 3); !ok || d != 3_500_000 {
		t.Fatalf("after the first left: departs %d, %v; want 3.5e6", d, ok)
	}
	// An idle link starts at once again.
	if d, ok := s.admit(10_000_000, 100, rate, 3); !ok || d != 10_100_000 {
		t.Fatalf("idle link: departs %d, %v; want 10.1e6", d, ok)
	}
	// Over a long run the departures follow the rate exactly.
	var l shaper
	now, last := int64(0), int64(0)
	for range 10000 {
		if d, ok := l.admit(now, 1500, 100e6, 1000); ok {
			last = d
		}
		now += 100_000 // 10 kfps of 1500 B = 120 Mbit/s offered
	}
	if got := float64(l.free) / 1e9; got <= 0 || last != l.free {
		t.Fatalf("link busy until %g s", got)
	}
}
