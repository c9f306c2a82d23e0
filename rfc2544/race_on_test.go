//go:build race

package rfc2544

// raceSlowdown is how much slower the race detector makes the simulated
// suite (measured on the 2-CPU box: 0.11–0.13 s plain, 7.1 s under -race
// with other packages' race tests beside it, 55×).
const raceSlowdown = 100
