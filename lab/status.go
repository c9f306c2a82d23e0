package lab

import (
	"fmt"
	"io"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Status is a lab as `rfc2544 lab status` shows it: its state and, read
// now, the kernel DUT's counters or the relay's.
type Status struct {
	State    *State       `json:"state"`
	Counters *DUTCounters `json:"dut_counters,omitempty"`
	Relay    *RelayStats  `json:"relay,omitempty"`
	// Errors are the counters that could not be read.
	Errors []string `json:"errors,omitempty"`
}

// ReadStatus loads the lab called name and reads its DUT's counters.
func ReadStatus(name string) (*Status, error) {
	st, err := Load(name)
	if err != nil {
		return nil, err
	}
	out := &Status{State: st}
	switch {
	case st.DUT == DUTRelay:
		rs, err := st.RelayStats()
		if err != nil {
			out.Errors = append(out.Errors, err.Error())
		} else {
			out.Relay = &rs
		}
	case st.DUTNamespace != "":
		c, err := st.DUTCounters()
		if err != nil {
			out.Errors = append(out.Errors, err.Error())
		} else {
			out.Counters = &c
		}
	}
	return out, nil
}

// WriteText writes s as tables for people: the ports, the settings, the
// counters.
func (s *Status) WriteText(w io.Writer) error {
	if err := writeState(w, s.State); err != nil {
		return err
	}
	if s.Counters != nil {
		if err := writeCounters(w, s.Counters); err != nil {
			return err
		}
	}
	if s.Relay != nil {
		if err := writeRelay(w, s.Relay); err != nil {
			return err
		}
	}
	for _, e := range s.Errors {
		fmt.Fprintln(w, "warning:", e)
	}
	return nil
}

// newTable returns a table that prints its headers as given
// (tablewriter v1).
func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
}

func writeState(w io.Writer, st *State) error {
	t := newTable(w)
	t.Header("Port", "Namespace", "Interface", "MAC", "IPv4", "IPv6", "Gateway", "MTU")
	for _, p := range []struct {
		name string
		p    Port
	}{{"A", st.A}, {"B", st.B}} {
		t.Append(p.name, p.p.Namespace, p.p.Interface, p.p.MAC.String(), p.p.IPv4.String(), p.p.IPv6.String(),
			p.p.GatewayV4.String()+" "+p.p.GatewayV6.String(), fmt.Sprint(p.p.MTU))
	}
	if st.DUTNamespace != "" {
		for _, p := range []struct {
			name string
			p    DUTPort
		}{{"DUT→A", st.DUTA}, {"DUT→B", st.DUTB}} {
			t.Append(p.name, st.DUTNamespace, p.p.Interface, p.p.MAC, p.p.IPv4.String(), p.p.IPv6.String(), "", fmt.Sprint(p.p.MTU))
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "settings: %s\n", st.Config.Flags())
	if len(st.DUTCPUs) > 0 {
		fmt.Fprintf(w, "DUT receive processing (RPS) on CPU %v: keep the tester off it\n", st.DUTCPUs)
	}
	f := st.Features
	fmt.Fprintf(w, "kernel: netem %v, tbf %v, nftables %v, %d CPUs\n", f.Netem, f.Tbf, f.Nftables, f.CPUs)
	if st.DUT == DUTRelay {
		bound := "≥ "
		if st.RelaySaturated {
			bound = ""
		}
		fmt.Fprintf(w, "relay: pid %d, ceiling %s%.0f frames/s per direction (64-byte frames, measured at up)\n", st.RelayPID, bound, st.RelayCeilingFPS)
	}
	return nil
}

func writeCounters(w io.Writer, c *DUTCounters) error {
	fmt.Fprintf(w, "DUT forwarded: %d IPv4, %d IPv6; nftables accepted %d, random-loss drops %d (A→B) %d (B→A); qdisc drops %d (A→B) %d (B→A)\n",
		c.Forwarded4, c.Forwarded6, c.Accepted, c.LossDropsAB, c.LossDropsBA, c.QdiscDropsAB, c.QdiscDropsBA)
	t := newTable(w)
	t.Header("DUT port", "RX packets", "RX dropped", "TX packets", "TX dropped")
	for _, p := range []struct {
		n string
		c LinkCounters
	}{{"dut-a", c.DutA}, {"dut-b", c.DutB}} {
		t.Append(p.n, fmt.Sprint(p.c.RxPackets), fmt.Sprint(p.c.RxDropped), fmt.Sprint(p.c.TxPackets), fmt.Sprint(p.c.TxDropped))
	}
	return t.Render()
}

func writeRelay(w io.Writer, rs *RelayStats) error {
	t := newTable(w)
	t.Header("Relay", "Received", "Forwarded", "Lost", "Reordered", "Duplicated", "Overflow", "Socket drops", "Expired")
	for _, d := range []struct {
		n string
		s RelayDirStats
	}{{"A→B", rs.AtoB}, {"B→A", rs.BtoA}} {
		s := d.s
		t.Append(d.n, fmt.Sprint(s.Received), fmt.Sprint(s.Forwarded), fmt.Sprint(s.Dropped), fmt.Sprint(s.Reordered),
			fmt.Sprint(s.Duplicated), fmt.Sprint(s.Overflow), fmt.Sprint(s.SocketDrops), fmt.Sprint(s.Expired))
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "relay peak %.0f frames/s (100 ms window), up %v\n", rs.PeakFPS, rs.Uptime.Round(time.Second))
	return nil
}
