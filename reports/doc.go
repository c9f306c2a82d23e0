// Package reports renders rfc2544.Results: tables (tablewriter), the JSON
// results file, CSV per test, charts (gonum/plot, SVG and PNG), a one-file
// HTML report, and run-vs-run comparisons. Every renderer is a pure function
// of results writing to an io.Writer; nothing here runs traffic.
package reports
