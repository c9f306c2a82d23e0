package reports

import (
	"strings"
	"testing"
)

func TestParseChoice(t *testing.T) {
	for _, tt := range []struct {
		name, format, test, chart string
		want                      Choice
		err                       string
	}{
		{"table", "table", "", "", Choice{Format: "table"}, ""},
		{"any case", "HTML", "", "", Choice{Format: "html"}, ""},
		{"csv of one table", "csv", "search-log", "", Choice{Format: "csv", Table: TableSearchLog}, ""},
		{"one chart", "png", "", "latency_cdf", Choice{Format: "png", Chart: ChartLatencyCDF}, ""},
		{"unknown format", "pdf", "", "", Choice{}, `--format "pdf": unknown; want one of table, json`},
		{"unknown test", "table", "jitter", "", Choice{}, "--test: "},
		{"chart with table", "table", "", "latency", Choice{}, "--chart goes with --format svg or png, not table"},
		{"unknown chart", "svg", "", "pie", Choice{}, "--chart: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseChoice(tt.format, tt.test, tt.chart)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) && !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || c != tt.want {
				t.Errorf("ParseChoice = %+v, %v; want %+v", c, err, tt.want)
			}
		})
	}
}
