package trials

import (
	"fmt"
	"math"

	"github.com/rfc2544/rfc2544/framing"
)

// QueuesFor is how many queues, each carrying perQueueFPS (a calibrated
// per-queue ceiling), a port needs to offer the line rate of lineBps at
// frameSize: ⌈line rate ÷ per-queue ceiling⌉. It is 0 when perQueueFPS or
// the line rate is not positive. A pure function.
func QueuesFor(lineBps float64, frameSize int, perQueueFPS float64) int {
	line := framing.LineRateFPS(lineBps, frameSize)
	if perQueueFPS <= 0 || line <= 0 {
		return 0
	}
	return int(math.Ceil(line/perQueueFPS - 1e-9))
}

// QueueArithmetic says, for each calibration point and line rate, how many
// queues (one sending core each) a port needs to offer that line rate at
// the point's size: the point's ceiling, measured with queues queues per
// port, divided by queues is the per-queue ceiling (QueuesFor). It assumes
// queues scale linearly, which a host with more cores must confirm by
// calibrating with that many. One line per size and rate, e.g.
// "10G at 64 B: 14,880,952 fps line rate ÷ 826,991 fps per queue = 18 queues".
func QueueArithmetic(pts []CalibrationPoint, queues int, linesBps []float64) []string {
	queues = max(queues, 1)
	var out []string
	for _, p := range pts {
		per := p.CeilingFPS / float64(queues)
		for _, l := range linesBps {
			n := QueuesFor(l, p.FrameSize, per)
			if n == 0 {
				continue
			}
			out = append(out, fmt.Sprintf("%s at %d B: %s fps line rate ÷ %s fps per queue = %d queue%s",
				gbit(l), p.FrameSize, groupThousands(framing.LineRateFPS(l, p.FrameSize)), groupThousands(per), n, plural(n)))
		}
	}
	return out
}

func gbit(bps float64) string {
	if bps >= 1e9 && math.Mod(bps, 1e9) == 0 {
		return fmt.Sprintf("%.0fG", bps/1e9)
	}
	return fmt.Sprintf("%.0f Mbit/s", bps/1e6)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// groupThousands renders v rounded to a whole number with commas.
func groupThousands(v float64) string {
	s := fmt.Sprintf("%.0f", math.Round(v))
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
