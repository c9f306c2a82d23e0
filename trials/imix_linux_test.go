//go:build linux

package trials

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/framing"
)

// The agent's halves take a trial spec from the wire: a mix code is refused
// before anything is sized from it.
func TestHalfRefusesMix(t *testing.T) {
	spec := Spec{FrameSize: framing.SizeIMIX, Streams: []Stream{{ID: 1, Direction: AtoB}}, RateFPS: 10, Duration: 1e9}
	err := checkHalf("", spec, spec.Streams, netipInvalid(), "udp send")
	if err == nil || !strings.Contains(err.Error(), "imix") {
		t.Errorf("checkHalf(imix) = %v, want an error naming the mix", err)
	}
}

func netipInvalid() (a netip.Addr) { return a }
