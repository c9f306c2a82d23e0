package trials

import (
	"strings"
	"testing"
)

// TestQueuesFor: the queues a 10G and a 25G port need at 64 B from a
// per-queue ceiling: 10G is 14,880,952 fps and 25G 37,202,381 fps (84
// bytes a frame on the wire), so a queue of 826,991 fps (the xdp
// generator's 64 B ceiling measured on this box's loop lab, one queue)
// needs 18 and 45 queues; a ceiling exactly dividing the line rate needs
// no extra queue; no ceiling gives no answer.
func TestQueuesFor(t *testing.T) {
	for _, c := range []struct {
		line float64
		size int
		per  float64
		want int
	}{
		{10e9, 64, 826991, 18}, {25e9, 64, 826991, 45},
		{10e9, 64, 14880952.380952381, 1}, {10e9, 64, 14880952.380952381 / 4, 4},
		{10e9, 1518, 596051, 2}, {25e9, 1518, 596051, 4},
		{10e9, 64, 0, 0}, {0, 64, 1e6, 0},
	} {
		if got := QueuesFor(c.line, c.size, c.per); got != c.want {
			t.Errorf("QueuesFor(%g, %d, %g) = %d, want %d", c.line, c.size, c.per, got, c.want)
		}
	}
	pts := []CalibrationPoint{{FrameSize: 64, CeilingFPS: 2 * 826991}}
	lines := QueueArithmetic(pts, 2, []float64{10e9, 25e9})
	want := []string{
		"10G at 64 B: 14,880,952 fps line rate ÷ 826,991 fps per queue = 18 queues",
		"25G at 64 B: 37,202,381 fps line rate ÷ 826,991 fps per queue = 45 queues",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("QueueArithmetic, ceiling measured with 2 queues:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
