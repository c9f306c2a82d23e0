package lab

// Truth is what a lab's DUT does to frames of one size from A to B by its
// settings alone: the answers a test of it should find.
type Truth struct {
	FrameSize int
	// ThroughputFPS is the shaper's rate in frames per second: tbf counts
	// a frame without its FCS (the IP packet and the Ethernet header), so
	// a rate of R bit/s passes R / (8 (F − 4)) frames of F bytes.
	ThroughputFPS float64
	// BackToBackFrames is the longest burst at lineBps that passes
	// without loss by the model: the burst fills the bucket and then the
	// queue while tbf drains at R, so N = (queue + bucket frames) /
	// (1 − R/line). Zero when the line is not faster than R. The kernel's
	// input queue before tbf (netdev_max_backlog per CPU) may hold up to
	// that many frames more over 1 − R/line while the DUT's CPU is busy.
	BackToBackFrames float64
}

// TruthAtoB is the lab's truth for frames of size bytes on a line of
// lineBps: only for a router whose kernel DUT shapes A to B with tbf and
// does nothing else to the frames (no loss, delay, firewall rules) and
// carries size (ok false otherwise).
func (c Config) TruthAtoB(size int, lineBps float64) (Truth, bool) {
	c = c.withDefaults()
	s := c.AtoB
	switch {
	case c.Topology != TopologyRouter || c.DUT != DUTKernel || s.RateBps == 0:
		return Truth{}, false
	case s.LossPercent > 0 || c.Delay > 0 || c.Jitter > 0 || c.FWRules > 0 || c.FWSet > 0 || c.FWStateful:
		return Truth{}, false
	case size < 64 || size-18 > min(c.MTUA, c.MTUB):
		return Truth{}, false
	}
	l2 := float64(size - 4)
	t := Truth{FrameSize: size, ThroughputFPS: float64(s.RateBps) / (8 * l2)}
	burst := s.bucket(c.MTUB)
	if line := lineBps / (8 * float64(size+20)); line > t.ThroughputFPS {
		t.BackToBackFrames = (float64(s.LimitPackets) + float64(burst)/l2) / (1 - t.ThroughputFPS/line)
	}
	return t, true
}
