package reports

import (
	"fmt"
	"strings"

	"github.com/rfc2544/rfc2544/framing"
	"github.com/rfc2544/rfc2544/rfc2544"
)

// A frame-size mix (framing.MixOf) is a row of its own, named ("imix"), in
// every table and CSV; charts place it at its mean frame size.

// sizeLabel is a size for a legend: "64 B", or the mix's name.
func sizeLabel(size int) string {
	if framing.IsMix(size) {
		return framing.SizeName(size)
	}
	return fmt.Sprintf("%d B", size)
}

// searchLogTitle titles a size's throughput search log.
func searchLogTitle(size int) string {
	if m, ok := framing.MixOf(size); ok {
		return fmt.Sprintf("Throughput search log, %s (mean frame %.2f bytes)", m.Name, m.MeanSize())
	}
	return fmt.Sprintf("Throughput search log, %d-byte frames", size)
}

// sizeNames lists sizes by name ("64, imix, 1518").
func sizeNames(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = framing.SizeName(x)
	}
	return strings.Join(s, ", ")
}

// addSizeLosses adds, under a mix's frame loss point, a row per size of
// the mix ("imix: 570") with its frames sent, received and its loss, so
// loss is attributed to a size.
func addSizeLosses(t *table, mix int, sizes []rfc2544.SizeLoss) {
	for _, l := range sizes {
		t.add(fmt.Sprintf("%s: %d", framing.SizeName(mix), l.FrameSize), dash, dash, dash, count(l.Sent), count(l.Received),
			pct(l.LossPercent), "")
	}
}

// addSizeLatencies adds, under a mix's latency row, a row per size of the
// mix (rfc2544.LatencyResult.Sizes).
func addSizeLatencies(t *table, mix int, sizes []rfc2544.SizeLatency) {
	for _, l := range sizes {
		s := l.Summary
		t.add(fmt.Sprintf("%s: %d", framing.SizeName(mix), l.FrameSize), dash, dash, usec(float64(s.MinNs)), usec(s.MeanNs),
			usec(float64(s.MaxNs)), usec(float64(s.P99Ns)), usec(float64(s.P999Ns)), usec(float64(s.PDVP999Ns)), dash, dash,
			count(s.Count), "")
	}
}
