package reports

import (
	"fmt"
	"slices"
	"strings"
)

// ParseChoice reads a Choice as the report verb's options give it: format
// (one of Formats, any case), test (a Table name, ParseTable; "" for every
// table) and chart (a ChartKind, ParseChartKind, with format svg or png
// only; "" for every chart). Errors name the option (--format, --test,
// --chart). ToDir and Wide are the caller's.
func ParseChoice(format, test, chart string) (Choice, error) {
	c := Choice{Format: strings.ToLower(format)}
	if !slices.Contains(Formats, c.Format) {
		return c, fmt.Errorf("--format %q: unknown; want one of %s", format, strings.Join(Formats, ", "))
	}
	var err error
	if test != "" {
		if c.Table, err = ParseTable(test); err != nil {
			return c, fmt.Errorf("--test: %v", err)
		}
	}
	if chart != "" {
		if c.Format != "svg" && c.Format != "png" {
			return c, fmt.Errorf("--chart goes with --format svg or png, not %s", c.Format)
		}
		if c.Chart, err = ParseChartKind(chart); err != nil {
			return c, fmt.Errorf("--chart: %v", err)
		}
	}
	return c, nil
}
