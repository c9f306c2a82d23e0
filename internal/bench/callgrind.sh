#!/usr/bin/env bash
# callgrind.sh - user-space instructions per frame of the raw generator
# (`rfc2544 gen`) and of trafgen, counted by valgrind's callgrind: a
# repeatable measure on a noisy box, beside bench.sh's wall-clock rates.
#
# Each tool sends 64-byte frames at full speed on a veth pair in a
# namespace this script creates (r2544-cg) and deletes, twice with
# different lengths; instructions per frame is the difference of the two
# runs' totals over the difference of their frames, so start-up (module
# init, the ELF loader) cancels out. Callgrind counts user space only: the
# kernel's transmit path, the larger part of a frame's cost, is not in it.
# Go's asynchronous preemption signals upset callgrind, so the engine runs
# with GODEBUG=asyncpreemptoff=1.
#
# Usage: internal/bench/callgrind.sh [-f FRAME]   (root; needs valgrind and
# netsniff-ng, installed with apt-get when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
FRAME=64
while getopts f: o; do case $o in f) FRAME=$OPTARG ;; *) exit 2 ;; esac; done
for p in valgrind:valgrind trafgen:netsniff-ng; do
  command -v "${p%%:*}" >/dev/null || apt-get install -y -qq "${p#*:}" >/dev/null
done
NS=r2544-cg
TMP=$(mktemp -d)
cleanup() { ip netns del $NS 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT
ip netns add $NS
ip -n $NS link add cga type veth peer name cgb
ip -n $NS link set cga up
ip -n $NS link set cgb up
mac() { ip -n $NS -j link show "$1" | python3 -c 'import json,sys;print(json.load(sys.stdin)[0]["address"])'; }
DMAC=$(mac cgb) SMAC=$(mac cga)
go build -o "$TMP/rfc2544" ./cmd/rfc2544

# engine: Ir and frames of a run of $1 seconds
engine() {
  GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$TMP/e.$1.out" \
    "$TMP/rfc2544" gen --ns $NS --dev cga --dmac "$DMAC" --frame "$FRAME" --secs "$1s" --json >"$TMP/e.$1.json" 2>"$TMP/e.$1.err"
  echo "$(sed -n 's/.*Collected : //p' "$TMP/e.$1.err") $(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["Sent"])' "$TMP/e.$1.json")"
}
# trafgen: Ir and frames of a run of $1 frames (its child process does the sending)
trafgen_run() {
  printf '{ eth(da=%s, sa=%s, type=0x0800), ipv4(sa=198.18.0.2, da=198.19.0.2, ttl=64, df), udp(sp=7, dp=7), fill(0x00, %d) }\n' \
    "$DMAC" "$SMAC" $((FRAME - 46)) >"$TMP/tg.cfg"
  ip netns exec $NS valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$TMP/t.$1.%p.out" \
    trafgen -o cga -i "$TMP/tg.cfg" -P 1 --no-sock-mem -Q -n "$1" >"$TMP/t.$1.log" 2>&1
  echo "$(sed -n 's/.*Collected : //p' "$TMP/t.$1.log" | sort -n | tail -1) $1"
}
per_frame() { # per_frame "IR1 N1" "IR2 N2"
  python3 -c 'import sys; a=sys.argv[1].split(); b=sys.argv[2].split(); print("%.1f" % ((int(b[0])-int(a[0]))/(int(b[1])-int(a[1]))))' "$1" "$2"
}
e1=$(engine 1) e3=$(engine 3)
t1=$(trafgen_run 500000) t3=$(trafgen_run 1500000)
E=$(per_frame "$e1" "$e3") T=$(per_frame "$t1" "$t3")
printf '%d-byte frames, user-space instructions per frame (callgrind):\n' "$FRAME"
printf '  rfc2544 gen (raw)  %8s   (runs: %s / %s Ir/frames)\n' "$E" "$e1" "$e3"
printf '  trafgen            %8s   (runs: %s / %s)\n' "$T" "$t1" "$t3"
printf '  engine / trafgen   %8s\n' "$(python3 -c "print('%.2f' % ($E/$T))")"
echo "engine, where they go (the 3 s run, whole run's share):"
callgrind_annotate "$TMP/e.3.out" 2>/dev/null | grep -E 'rfc2544/rfc2544/(trials|framing)' | head -6 | cut -c1-150
