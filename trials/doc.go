// Package trials is the traffic engine. It owns the ports (raw AF_PACKET and
// kernel UDP sockets, optionally inside a network namespace), learning (ARP and
// neighbor discovery), pacing, transmit and receive, per-stream counters
// (sent, received, lost, reordered, duplicate, late), latency histograms and
// kernel drop detection. One Spec run is one trial and yields one Result.
//
// trials knows nothing of RFC 2544's search rules: package rfc2544 decides which
// trials to run and what their results mean.
package trials
