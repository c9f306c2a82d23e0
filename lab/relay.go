package lab

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/rfc2544/rfc2544/lab/relay"
)

// RelayConfig sets what the relay DUT does to every frame it forwards
// (relay.Settings); RelayStats and RelayDirStats are its counters.
type (
	RelayConfig   = relay.Settings
	RelayStats    = relay.Stats
	RelayDirStats = relay.DirStats
)

// RelayStats asks the lab's relay for its counters.
func (s *State) RelayStats() (RelayStats, error) {
	if s.DUT != DUTRelay || s.RelaySocket == "" {
		return RelayStats{}, fmt.Errorf("lab %q has no relay DUT", s.Name)
	}
	return relay.Command(s.RelaySocket, "stats")
}

// relaySpec is what the relay of st forwards between and how.
func (st *State) relaySpec() (relay.Spec, error) {
	spec := relay.Spec{
		Namespace: st.DUTNamespace, Socket: relaySockPath(st.Name), CPUs: st.DUTCPUs, Settings: st.Config.Relay,
		A: relay.Side{Interface: ifDutA, MTU: st.DUTA.MTU, PeerMAC: st.A.MAC, IPv4: st.DUTA.IPv4.Addr(), IPv6: st.DUTA.IPv6.Addr()},
		B: relay.Side{Interface: ifDutB, MTU: st.DUTB.MTU, PeerMAC: st.B.MAC, IPv4: st.DUTB.IPv4.Addr(), IPv6: st.DUTB.IPv6.Addr()},
	}
	var err error
	if spec.A.MAC, err = net.ParseMAC(st.DUTA.MAC); err != nil {
		return spec, fmt.Errorf("lab %s: dut-a mac: %w", st.Name, err)
	}
	if spec.B.MAC, err = net.ParseMAC(st.DUTB.MAC); err != nil {
		return spec, fmt.Errorf("lab %s: dut-b mac: %w", st.Name, err)
	}
	return spec, nil
}

// loadRelaySpec is the relay spec of the lab called name, as JSON, from
// its state file.
func loadRelaySpec(name string) (string, error) {
	st, err := Load(name)
	if err != nil {
		return "", err
	}
	spec, err := st.relaySpec()
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(spec)
	return string(b), err
}
