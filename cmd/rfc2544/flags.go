package main

import "github.com/rfc2544/rfc2544/internal/rate"

// formatBitRate writes bits per second in the module's one rate grammar
// (internal/rate), the way the rate flags read them.
func formatBitRate(bps float64) string { return rate.Format(bps) }
