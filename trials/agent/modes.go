package agent

import "github.com/rfc2544/rfc2544/trials/agent/wire"

// ClockSync is an agent's declared clock synchronization (Config.ClockSync).
type ClockSync = wire.ClockSync

// Clock synchronizations.
const (
	// ClockNone: the hosts' clocks are not synchronized; latency is
	// measured round trip.
	ClockNone = wire.ClockNone
	// ClockPTP: the user declares the clocks synchronized by PTP; one-way
	// latency may be measured.
	ClockPTP = wire.ClockPTP
)

// LatencyMode is how a trial measures latency across hosts
// (TesterConfig.Latency).
type LatencyMode = wire.LatencyMode

// Latency modes.
const (
	// LatencyRoundTrip: the agent reflects frames; the controller times
	// their round trip. Reports say "round trip".
	LatencyRoundTrip = wire.LatencyRoundTrip
	// LatencyOneWay: each receiver timestamps with its own clock; only
	// when both clocks are synchronized (--clock-sync ptp).
	LatencyOneWay = wire.LatencyOneWay
)
