package rfc2544

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/internal/testseed"
)

// TestBottleneckByThroughput: on a simulated DUT whose capacity C is drawn
// at test time (1–60 % of a 1 Gbit/s line; no buffer), the bottleneck is C within the
// search's resolution (0.25 % of the rate found), in L1 bits/s; a tester
// ceiling below C is an error naming --bb, never a bottleneck.
func TestBottleneckByThroughput(t *testing.T) {
	seed := testseed.Seed(t, "./rfc2544")
	rng := rand.New(rand.NewPCG(seed, 2))
	const link = 1e9
	c := link * (0.01 + 0.59*rng.Float64())
	t.Logf("capacity %.6g Mbit/s", c/1e6)
	sim := &SimDUT{LinkBps: link, CapacityBps: c}
	bps, src, err := BottleneckByThroughput(context.Background(), sim, TCPBottleneckConfig{LinkBps: link})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bottleneck %.6g Mbit/s (%s)", bps/1e6, src)
	if bps > c*1.0001 || bps < c*(1-0.0026) {
		t.Errorf("bottleneck %.6g Mbit/s, want the capacity %.6g Mbit/s −0.25 %%", bps/1e6, c/1e6)
	}
	if !strings.Contains(src, "UDP throughput search at 1518-byte frames") {
		t.Errorf("source %q", src)
	}
	lim := &SimDUT{LinkBps: link, CapacityBps: c, TesterCeilingFPS: c / 2 / (1538 * 8)}
	if _, _, err := BottleneckByThroughput(context.Background(), lim, TCPBottleneckConfig{LinkBps: link}); err == nil || !strings.Contains(err.Error(), "tester-limited") ||
		!strings.Contains(err.Error(), "--bb") {
		t.Errorf("a tester ceiling at C/2: error %v, want tester-limited naming --bb", err)
	}
	if _, _, err := BottleneckByThroughput(context.Background(), sim, TCPBottleneckConfig{}); err == nil || !strings.Contains(err.Error(), "--bb") {
		t.Errorf("no link rate: error %v", err)
	}
}
