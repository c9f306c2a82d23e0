package trials

import (
	"fmt"
	"strings"
)

// PauseParam is a port's Ethernet flow control (IEEE 802.3x PAUSE) setting
// as the driver reports it (ethtool -a).
type PauseParam struct {
	// Autoneg says pause is negotiated with the link partner.
	Autoneg bool `json:"autoneg"`
	// RX: the port stops sending when the partner sends PAUSE; TX: the
	// port sends PAUSE when its own receive side is full.
	RX bool `json:"rx"`
	TX bool `json:"tx"`
}

// PauseWarning says what flow control on a tester port means for the
// results and how to turn it off, or "" when it is off. where names the
// port, ifname is the interface.
func PauseWarning(where, ifname string, p PauseParam) string {
	if !p.RX && !p.TX {
		return ""
	}
	return fmt.Sprintf("%s: Ethernet flow control is on (rx %v, tx %v, autoneg %v): the DUT can PAUSE the tester instead of dropping, "+
		"and RFC 2544 results assume it is off; turn it off with: ethtool -A %s autoneg off rx off tx off",
		where, onOff(p.RX), onOff(p.TX), onOff(p.Autoneg), ifname)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// pauseStat classifies a driver statistic name (ethtool -S) as a count of
// PAUSE (XOFF) frames received or sent. Names differ by driver:
// rx_pause_frames (bnxt), rx_pause_ctrl_phy (mlx5), rx_flow_control_xoff
// (ixgbe, igb), port.link_xoff_rx (i40e), tx_pause (virtio/others). XON
// (resume) frames and per-priority counters are left out.
func pauseStat(name string) (rx, tx bool) {
	n := strings.ToLower(name)
	if !strings.Contains(n, "pause") && !strings.Contains(n, "xoff") {
		return false, false
	}
	if strings.Contains(n, "prio") || strings.Contains(n, "pfc") || strings.Contains(n, "duration") || strings.Contains(n, "transition") {
		return false, false
	}
	switch {
	case strings.HasPrefix(n, "rx") || strings.HasSuffix(n, "_rx") || strings.Contains(n, "_rx_"):
		return true, false
	case strings.HasPrefix(n, "tx") || strings.HasSuffix(n, "_tx") || strings.Contains(n, "_tx_"):
		return false, true
	}
	return false, false
}

// sumPause adds up the PAUSE counters of a statistics dump (names and
// values in the same order).
func sumPause(names []string, values []uint64) (rx, tx uint64) {
	for i, n := range names {
		if i >= len(values) {
			break
		}
		r, t := pauseStat(n)
		if r {
			rx += values[i]
		}
		if t {
			tx += values[i]
		}
	}
	return rx, tx
}
