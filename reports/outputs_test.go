package reports

import (
	"errors"
	"strings"
	"testing"

	"github.com/rfc2544/rfc2544/rfc2544"
)

func TestOutputsChoices(t *testing.T) {
	empty := &rfc2544.Results{Schema: rfc2544.SchemaVersion}
	for _, tt := range []struct {
		name   string
		c      Choice
		noData bool
		want   string // substring of the error; "" for none
		files  []string
	}{
		{"tables", Choice{Format: "table"}, false, "", []string{"report.txt"}},
		{"unknown format", Choice{Format: "pdf"}, false, `--format "pdf"`, nil},
		{"missing table", Choice{Format: "table", Table: TableLatency}, false, "--test latency: the results hold no latency results (the run's tests: none)", nil},
		{"csv of nothing", Choice{Format: "csv", ToDir: true}, true, "csv", nil},
		{"csv on stdout", Choice{Format: "csv"}, false, "add --test", nil},
		{"charts of nothing", Choice{Format: "svg", ToDir: true}, true, "charts", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			outs, err := Outputs(empty, tt.c)
			if errors.Is(err, ErrNoData) != tt.noData {
				t.Errorf("error %v: ErrNoData %v, want %v", err, !tt.noData, tt.noData)
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range outs {
				names = append(names, o.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.files, ",") {
				t.Errorf("outputs %v, want %v", names, tt.files)
			}
		})
	}
}
