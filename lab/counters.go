package lab

import (
	"bufio"
	"strconv"
	"strings"
)

// LinkCounters are one interface's kernel counters.
type LinkCounters struct {
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxDropped uint64 `json:"rx_dropped"`
	TxDropped uint64 `json:"tx_dropped"`
}

// DUTCounters are the kernel DUT's counters, read with State.DUTCounters.
type DUTCounters struct {
	// Forwarded4 and Forwarded6 are the DUT's forwarded IPv4 and IPv6
	// packets (Ip ForwDatagrams, Ip6OutForwDatagrams).
	Forwarded4 uint64 `json:"forwarded_v4"`
	Forwarded6 uint64 `json:"forwarded_v6"`
	// DutA and DutB are the DUT ports' link counters. With a veth, a frame
	// the DUT could not take in (backlog full under RPS) is counted in
	// the sending peer's tx_dropped and the DUT port's rx_dropped.
	DutA LinkCounters `json:"dut_a"`
	DutB LinkCounters `json:"dut_b"`
	// QdiscDropsAB and QdiscDropsBA are the shaping qdiscs' drops (queue
	// full) on the egress towards B and towards A.
	QdiscDropsAB uint64 `json:"qdisc_drops_ab"`
	QdiscDropsBA uint64 `json:"qdisc_drops_ba"`
	// LossDropsAB and LossDropsBA are frames dropped by the random-loss
	// rules; Accepted counts frames that passed the forward chain (zero
	// when the lab has no nftables rules).
	LossDropsAB uint64 `json:"loss_drops_ab"`
	LossDropsBA uint64 `json:"loss_drops_ba"`
	Accepted    uint64 `json:"nft_accepted"`
	// InvalidDrops counts frames the stateful rule base dropped as
	// conntrack-invalid (FWStateful); SetDrops frames whose source was in
	// the FWSet set.
	InvalidDrops uint64 `json:"nft_invalid_drops,omitempty"`
	SetDrops     uint64 `json:"nft_set_drops,omitempty"`
}

// parseSNMP parses /proc/net/snmp (pairs of "Proto: names" / "Proto:
// values" lines) into "Proto:Name" keys.
func parseSNMP(text string) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	var header []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if header != nil && header[0] == f[0] {
			for i := 1; i < len(f) && i < len(header); i++ {
				if v, err := strconv.ParseUint(f[i], 10, 64); err == nil {
					out[strings.TrimSuffix(f[0], ":")+":"+header[i]] = v
				}
			}
			header = nil
			continue
		}
		header = f
	}
	return out
}

// parseSNMP6 parses /proc/net/snmp6 ("Name value" lines).
func parseSNMP6(text string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 {
			if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				out[f[0]] = v
			}
		}
	}
	return out
}
