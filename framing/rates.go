package framing

import (
	"math"
	"time"
)

// Ethernet constants, in bytes (RFC 2544 §9, IEEE 802.3).
const (
	// PreambleSFD is the preamble plus start-of-frame delimiter.
	PreambleSFD = 8
	// MinIFG is the minimum inter-frame gap.
	MinIFG = 12
	// L1Overhead is what a frame occupies on the wire beyond its own bytes:
	// preamble, SFD and the minimum inter-frame gap.
	L1Overhead = PreambleSFD + MinIFG
	// FCSLen is the frame check sequence the NIC appends; frame sizes include it.
	FCSLen = 4
	// EthHeaderLen is the Ethernet II header (two MACs and the EtherType).
	EthHeaderLen = 14
	// VLANTagLen is one 802.1Q tag.
	VLANTagLen = 4
)

// LineRateFPS is the maximum frame rate, in frames per second, of frames of
// frameSize bytes (FCS included) on a link of linkBps bits per second:
// linkBps / ((F+20)*8). It is not rounded; RFC tables round it down. For a
// mix code F is the mix's mean frame size (MeanFrameSize): every frame of
// the mix carries its own 20 bytes of preamble and gap.
func LineRateFPS(linkBps float64, frameSize int) float64 {
	f := MeanFrameSize(frameSize)
	if f <= 0 || linkBps <= 0 {
		return 0
	}
	return linkBps / ((f + L1Overhead) * 8)
}

// L1Bps is the wire bit rate, preamble and gap included, of fps frames per
// second of frameSize bytes (of a mix's mean frame size for a mix code).
func L1Bps(fps float64, frameSize int) float64 {
	return fps * (MeanFrameSize(frameSize) + L1Overhead) * 8
}

// L2Bps is the frame bit rate (FCS included, preamble and gap not) of fps
// frames per second of frameSize bytes (of a mix's mean frame size for a
// mix code).
func L2Bps(fps float64, frameSize int) float64 {
	return fps * MeanFrameSize(frameSize) * 8
}

// PercentToFPS converts a load in percent of line rate to frames per second.
func PercentToFPS(percent, linkBps float64, frameSize int) float64 {
	return LineRateFPS(linkBps, frameSize) * percent / 100
}

// FPSToPercent converts frames per second to percent of line rate.
func FPSToPercent(fps, linkBps float64, frameSize int) float64 {
	max := LineRateFPS(linkBps, frameSize)
	if max == 0 {
		return 0
	}
	return fps / max * 100
}

// InterFrameTime is the time from the start of one frame to the start of the
// next at fps frames per second. It is zero for a non-positive rate.
func InterFrameTime(fps float64) time.Duration {
	if fps <= 0 || math.IsInf(fps, 0) || math.IsNaN(fps) {
		return 0
	}
	return time.Duration(float64(time.Second) / fps)
}
