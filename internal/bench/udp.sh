#!/usr/bin/env bash
# udp.sh - the UDP transport measured against iperf3 and iperf2 in the same run.
#
# Runs `go test -run TestBenchUDPForward ./trials` (RFC2544_BENCH=1) twice,
# each on its own throw-away lab, under the lab lock ($RFC2544_LAB_LOCK):
#   1. no RPS (as in peers.sh beside this script): the DUT forwards in the
#      sender's softirq on CPU 0, receivers on CPU 1;
#   2. the lab's default: the DUT's receive work steered to the last CPU.
# Each run interleaves the full UDP engine (sendmmsg/UDP_SEGMENT generator
# and recvmmsg receiver), iperf3 (-u -l F-46 -b 0) and iperf2 (-u -l F-46
# -b 10G), REPS times, and prints the medians of the DUT's forwarded rate
# (its B-side transmit counter) and the ratios. Needs root, go, iperf3, iperf.
#
# Usage: internal/bench/udp.sh [-r REPS] [-s FRAME]
set -euo pipefail
REPS=3 FRAME=64
while (($#)); do
  case $1 in
    -r) REPS=$2; shift ;;
    -s) FRAME=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "udp.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "udp.sh: needs root" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=need.sh
. "$HERE/need.sh"
need flock:util-linux iperf3:iperf3 iperf:iperf
command -v go >/dev/null || { echo "udp.sh: go not found" >&2; exit 2; }
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT"
echo "# udp bench $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; reps $REPS; frame $FRAME"
for rps in 0 1; do
  echo "## lab $( ((rps)) && echo "default (RPS: DUT on the last CPU)" || echo "without RPS (DUT on the sender's CPU)")"
  RFC2544_BENCH=1 RFC2544_BENCH_RPS=$rps RFC2544_BENCH_REPS=$REPS RFC2544_BENCH_FRAME=$FRAME \
    flock "${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}" go test -count=1 -timeout 10m -run 'TestBenchUDPForward$' -v ./trials |
    grep -E 'rep [0-9]+ |BENCH|FAIL|ok '
done
