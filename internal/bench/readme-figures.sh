#!/usr/bin/env bash
# readme-figures.sh - reproduces every performance figure README.md quotes:
#
#   1. the main job's wall time ("It took 1 min 9 s on a 2-CPU Debian VM"):
#      `time go run ./cmd/rfc2544 run --lab`, build cached, N times;
#   2. the tester's ceiling ("about 720,000 frames/s here: 64 and 128
#      bytes"): the same runs' 64 and 128 B throughput, which the unshaped lab
#      reports as "≥ X (tester-limited)", and, as a second measure, `rfc2544
#      calibrate` on a loop lab (no DUT) at 64 and 128 B.
#
# Prints each run and the medians. Every run holds the lab lock
# ($RFC2544_LAB_LOCK, default /tmp/rfc2544-lab.lock). Needs root, go, jq.
# Quote medians of a quiet machine: nothing else running.
#
# Usage: internal/bench/readme-figures.sh [-n RUNS] [--smoke]
#   --smoke  check the script works in about 20 s: one run of the main job
#            cut to --sizes 64,128 --tests throughput (its time is then not
#            the README's figure) and a 1 s calibration.
set -euo pipefail
export LC_ALL=C
RUNS=3 SMOKE=0
while (($#)); do
  case $1 in
    -n) RUNS=$2; shift ;;
    --smoke) SMOKE=1 RUNS=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "readme-figures.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "readme-figures.sh: needs root (the lab)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=need.sh
. "$HERE/need.sh"
need jq:jq flock:util-linux
export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "readme-figures.sh: go not found" >&2; exit 2; }
ROOT=$(cd "$HERE/../.." && pwd)
LOCK=${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}
TMP=$(mktemp -d /tmp/readme-figures.XXXXXX)
CAL=rfcal$$
cleanup() {
  [[ -x $TMP/rfc2544 ]] && "$TMP/rfc2544" lab down --name $CAL >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$ROOT"
# "build cached", as the README measures it: build once before timing.
go build -o "$TMP/rfc2544" ./cmd/rfc2544
echo "# readme figures $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; commit $(git rev-parse --short HEAD 2>/dev/null || echo ?); runs $RUNS"

median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) {print "nan"; exit} print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

extra=()
((SMOKE)) && extra=(--sizes 64,128 --tests throughput)
: >"$TMP/times" >"$TMP/fps64" >"$TMP/fps128"
for i in $(seq 1 "$RUNS"); do
  out=$TMP/run$i
  exec 9>"$LOCK"; flock 9
  t0=$(date +%s.%N)
  rc=0
  go run ./cmd/rfc2544 run --lab --out "$out" "${extra[@]}" >"$TMP/run$i.txt" 2>"$TMP/run$i.err" || rc=$?
  t1=$(date +%s.%N)
  flock -u 9
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}')
  echo "$secs" >>"$TMP/times"
  for f in 64 128; do
    jq -r --argjson f $f '.throughput[] | select(.frame_size == $f) | "\(.fps) \(.tester_limited // false)"' "$out/results.json" >"$TMP/tp"
    read -r fps lim <"$TMP/tp" || { fps=nan lim=?; }
    echo "$fps" >>"$TMP/fps$f"
    printf -v "l$f" '%s' "$lim"
  done
  printf 'run %d: main job %s s (go run exit %d: 1 when the command exited 3, tester-limited, as the README says); 64 B %.0f fps (tester-limited %s); 128 B %.0f fps (tester-limited %s)\n' \
    "$i" "$secs" "$rc" "$(tail -1 "$TMP/fps64")" "$l64" "$(tail -1 "$TMP/fps128")" "$l128"
done
m=$(median <"$TMP/times")
printf 'main job wall time, median of %d: %s s = %d min %d s%s\n' "$RUNS" "$m" "$(awk -v m="$m" 'BEGIN{print int(m / 60)}')" \
  "$(awk -v m="$m" 'BEGIN{print int(m) % 60}')" "$( ((SMOKE)) && echo ' (smoke: sizes 64,128, throughput only: not the README figure)')"
printf 'tester ceiling from the main job (≥ X, tester-limited), median: 64 B %.0f fps, 128 B %.0f fps\n' "$(median <"$TMP/fps64")" "$(median <"$TMP/fps128")"

# Calibration on a loop lab: the generator and receiver alone.
dur=2s
((SMOKE)) && dur=1s
exec 9>"$LOCK"; flock 9
"$TMP/rfc2544" lab up --name $CAL --topology loop >/dev/null
"$TMP/rfc2544" calibrate --lab $CAL --sizes 64,128 --duration $dur --json >"$TMP/cal.json"
"$TMP/rfc2544" lab down --name $CAL >/dev/null
flock -u 9
jq -r '.[] | "calibrate (loop lab, \(.frame_size) B): offered \(.offered_fps | floor) fps, received \(.received_fps | floor) fps, ceiling \(.ceiling_fps | floor) fps"' "$TMP/cal.json"
