package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rfc2544/rfc2544/rfc2544"
)

func TestTablesOfAResultsFile(t *testing.T) {
	res := loadFixture(t, fixture1500)
	if got := TablesIn(res); !cmp.Equal(got, Tables) {
		t.Fatalf("TablesIn(fixture) = %v, want every table %v", got, Tables)
	}
	lat := OnlyTable(res, TableLatency)
	if got, want := TablesIn(lat), []Table{TableLatency}; !cmp.Equal(got, want) {
		t.Errorf("TablesIn(OnlyTable(latency)) = %v, want %v", got, want)
	}
	if lat.Tool != res.Tool || lat.DUT.Description != res.DUT.Description || len(res.Throughput) == 0 {
		t.Error("OnlyTable dropped the metadata or changed res")
	}
	if OnlyTable(res, "") != res {
		t.Error("OnlyTable(res, \"\") is not res")
	}
	if got, want := TablesIn(OnlyTable(res, TableSearchLog)), []Table{TableThroughput, TableSearchLog}; !cmp.Equal(got, want) {
		t.Errorf("the search log is the throughput results: TablesIn = %v, want %v", got, want)
	}
	if got := TablesIn(&rfc2544.Results{}); got != nil {
		t.Errorf("TablesIn(empty) = %v, want none", got)
	}
	for _, tc := range []struct {
		t    Table
		want []ChartKind
	}{
		{TableThroughput, []ChartKind{ChartThroughput}},
		{TableSearchLog, []ChartKind{ChartThroughput}},
		{TableLatency, []ChartKind{ChartLatency, ChartLatencyCDF, ChartLatencyPercentile}},
		{TableFrameLoss, []ChartKind{ChartFrameLoss}},
		{TableBackToBack, nil},
	} {
		if got := TableCharts(res, tc.t); !cmp.Equal(got, tc.want) {
			t.Errorf("TableCharts(%s) = %v, want %v", tc.t, got, tc.want)
		}
		if got := TableCharts(OnlyTable(res, TableBackToBack), tc.t); got != nil {
			t.Errorf("TableCharts(%s) of results without it = %v, want none", tc.t, got)
		}
	}
}

// ReadResultsFile reads regular files of a bounded size only: a huge file
// would eat memory (a FIFO: cmd/rfc2544's TestBoundedInputs).
func TestReadResultsFileBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxResultsBytes + 1) // sparse
	f.Close()
	for _, tc := range []struct{ path, want string }{
		{big, "256 MiB"},
		{dir, "folder"},
	} {
		_, err := ReadResultsFile(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadResultsFile(%s) = %v, want an error naming it and %q", tc.path, err, tc.want)
		}
	}
}
