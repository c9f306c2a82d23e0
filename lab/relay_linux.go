package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rfc2544/rfc2544/lab/relay"
)

// startRelay starts the relay process for st (relay.Start), measures its
// ceiling and switches it live.
func startRelay(ctx context.Context, st *State) error {
	spec, err := st.relaySpec()
	if err != nil {
		return err
	}
	st.RelaySocket = spec.Socket
	st.RelayPID, st.RelayStart, err = relay.Start(st.Name, spec, relayLogPath(st.Name), relayPIDPath(st.Name))
	if err != nil {
		return err
	}
	st.RelayCeilingFPS, st.RelaySaturated, err = relay.Calibrate(ctx, st.RelaySocket, st.A.Namespace, st.A.Interface, st.A.MAC, spec.A.MAC, st.A.IPv4.Addr())
	if err != nil {
		return err
	}
	_, err = relay.Command(st.RelaySocket, "live")
	return err
}

// stopRelay ends the lab's relay process, if any: the PID from st and from
// the PID file, each signalled only if the process carries this lab's relay
// marker (and, with st, the recorded start time).
func stopRelay(name string, st *State) error {
	pids := map[int]uint64{}
	if st != nil && st.RelayPID > 0 {
		pids[st.RelayPID] = st.RelayStart
	}
	if b, err := os.ReadFile(relayPIDPath(name)); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			if _, ok := pids[pid]; !ok {
				pids[pid] = 0
			}
		}
	}
	var errs []error
	for pid, start := range pids {
		if err := relay.End(pid, name, start); err != nil {
			errs = append(errs, fmt.Errorf("stop relay (pid %d): %w", pid, err))
		}
	}
	return errors.Join(errs...)
}
