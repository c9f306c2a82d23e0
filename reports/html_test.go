package reports

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestGoldenHTML(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	golden(t, "mtu1500.html", b.Bytes())
	if dir := os.Getenv("REPORTS_CHART_DIR"); dir != "" {
		os.WriteFile(dir+"/report.html", b.Bytes(), 0o644)
	}
}

// TestHTMLSelfContained checks what makes the report one self-contained,
// printable file: every table and chart inline, nothing fetched.
func TestHTMLSelfContained(t *testing.T) {
	res := loadFixture(t, fixture1500)
	var b bytes.Buffer
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	tests := []struct {
		name string
		re   string
		want int
	}{
		{"five inline charts", `<svg `, 5},
		{"no scripts", `(?i)<script`, 0},
		{"no external links or images", `(?i)<(link|img|iframe|object|embed)\b`, 0},
		{"no URL fetches in attributes", `(?i)(src|href)="(https?:)?//`, 0},
		{"no CSS imports or urls", `(?i)@import|url\(`, 0},
		{"print style sheet", `@media print`, 1},
		{"throughput section", `<h2 id="throughput">Throughput</h2>`, 1},
		{"search log per frame size", `<h3>Throughput search log, \d+-byte frames</h3>`, 7},
		{"tester-limited mark", `<td class="num limited">≥ 1,290,552</td>`, 3},
		{"tester-limited note in its cell", `<td class="limited">tester-limited: sim tester ceiling: 650000 fps offered of 1488095 fps intended per stream; ≥ 43.36% of line rate`, 1},
		{"not-found reason", `<td>frame size 1522 does not pass the path \(MTU\?\)`, 2}, // throughput and probe tables
		{"path probe section", `id="probe"`, 1},
		{"latency definition", `Latency definition: FIFO`, 1},
		{"back-to-back section", `id="back_to_back"`, 1},
		{"recovery section", `id="system_recovery"`, 1},
		{"DUT in metadata", `<dt>DUT</dt><dd>Fixture: simulated Linux router`, 1},
		{"tester paths in metadata", `<dt>Tester</dt><dd>transport raw, tx tx_ring \(qdisc bypass\), rx rx_ring</dd>`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(regexp.MustCompile(tt.re).FindAllStringIndex(page, -1)); got != tt.want {
				t.Errorf("%q occurs %d times, want %d", tt.re, got, tt.want)
			}
		})
	}
	if strings.Contains(page, "<?xml") {
		t.Error("an inline SVG kept its XML prolog")
	}
}
