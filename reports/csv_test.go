package reports

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

func TestGoldenCSV(t *testing.T) {
	res := loadFixture(t, fixture1500)
	for _, tb := range Tables {
		t.Run(string(tb), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteCSV(&b, res, tb); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
			if err != nil {
				t.Fatalf("output is not CSV: %v", err)
			}
			if len(rows) < 2 {
				t.Fatalf("got %d rows, want a header and data", len(rows))
			}
			golden(t, "mtu1500_"+string(tb)+".csv", b.Bytes())
		})
	}
}

func TestGoldenTableSingle(t *testing.T) {
	res := loadFixture(t, fixture1500)
	for _, tb := range Tables {
		t.Run(string(tb), func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteTable(&b, res, tb, false); err != nil {
				t.Fatal(err)
			}
			var all bytes.Buffer
			if err := WriteTables(&all, res); err != nil {
				t.Fatal(err)
			}
			// A single table is a verbatim part of the full report.
			if !strings.Contains(all.String(), b.String()) {
				t.Errorf("WriteTable(%s) output is not part of WriteTables output:\n%s", tb, b.String())
			}
		})
	}
}

func TestTableErrors(t *testing.T) {
	full := loadFixture(t, fixture1500)
	only := &rfc2544.Results{Schema: 1, Throughput: full.Throughput}
	tests := []struct {
		name  string
		res   *rfc2544.Results
		table Table
		want  string
	}{
		{"unknown test", full, Table("jitter"), `unknown test "jitter": want one of throughput, search_log, latency, frame_loss, back_to_back, system_recovery`},
		{"test not run", only, TableLatency, "results hold no latency results: the run did not include that test"},
		{"recovery not run", only, TableRecovery, "results hold no system_recovery results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, write := range map[string]func() error{
				"csv":  func() error { return WriteCSV(&bytes.Buffer{}, tt.res, tt.table) },
				"text": func() error { return WriteTable(&bytes.Buffer{}, tt.res, tt.table, false) },
			} {
				err := write()
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: error %v, want it to contain %q", name, err, tt.want)
				}
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	tests := []struct {
		in   string
		want Table
	}{
		{"throughput", TableThroughput},
		{"search-log", TableSearchLog},
		{"Frame-Loss", TableFrameLoss},
		{"b2b", TableBackToBack},
		{"back_to_back", TableBackToBack},
		{"recovery", TableRecovery},
		{"system-recovery", TableRecovery},
	}
	for _, tt := range tests {
		got, err := ParseTable(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTable(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
