package lab

import (
	"io"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteList writes a table of the labs that are up (names from List): name,
// topology, DUT, settings (as flags) and creation time; a lab whose state
// cannot be read shows its error.
func WriteList(w io.Writer, names []string) error {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header("Name", "Topology", "DUT", "Settings", "Created")
	for _, n := range names {
		st, err := Load(n)
		if err != nil {
			t.Append(n, "?", "?", err.Error(), "")
			continue
		}
		dut := "-"
		if st.Topology == TopologyRouter {
			dut = st.DUT.String()
		}
		t.Append(n, st.Topology.String(), dut, st.Config.Flags(), st.Created.Format(time.RFC3339))
	}
	return t.Render()
}
