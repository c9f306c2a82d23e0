#!/usr/bin/env bash
# bench.sh - the raw engine measured against its peers in the same run.
#
#   1. generator-only and through-DUT rates of the engine's generator
#      (`rfc2544 gen`), trafgen and iperf3, interleaved, with peers.sh beside
#      this script (its PEERS_CUSTOM_TX hook);
#   2. pacing accuracy from 1 % to 90 % of the generator's own ceiling, on a
#      private veth pair, judged by the interface's counters, not by the
#      generator: the rate is the tx counter's rise over a window timed by
#      this script (0.5 s after the start to 0.5 s before the end), and the
#      count of the whole run must equal the frames planned;
#   3. the full engine (generator + receiver) through the lab's kernel DUT vs
#      trafgen and iperf3 in the same lab, and the RSS of a long trial at full
#      speed (go test -run TestBench ./trials with RFC2544_BENCH=1);
#   4. (--parts tcp, not in the default set) the RFC 6349 transfer of
#      `rfc2544 tcp` beside iperf3 with the same window and connections on a
#      relay lab of a drawn rate and delay, REPS times (TestBenchTCPIperf3).
#
# Every part that sends traffic holds the lab lock ($RFC2544_LAB_LOCK,
# default /tmp/rfc2544-lab.lock, the one the lab tests take). Namespaces are
# created with a unique prefix and deleted on exit. Needs root; installs the
# peers (trafgen from netsniff-ng, iperf3, iperf, jq) with apt-get when they
# are missing. Self-contained: everything it runs is in this repository.
#
# Part 1 runs the engine's generator on --transport raw (default) or xdp with
# --queues N sending threads (default 1; the veths get N queues each).
#
# Usage: internal/bench/bench.sh [-r REPS] [-s "64 512 1518"] [-t SECS] [--rss-secs N] [--parts "peers pacing engine tcp"] [--transport raw|xdp] [--queues N]
# Smoke check (seconds): internal/bench/bench.sh -r 1 -s 64 -t 2 --rss-secs 2 --parts "pacing"
set -euo pipefail
export LC_ALL=C

REPS=3 SIZES="64 512 1518" SECS=3 RSS_SECS=60 PARTS="peers pacing engine" TRANSPORT=raw QUEUES=1
while (($#)); do
  case $1 in
    -r) REPS=$2; shift ;;
    -s) SIZES=$2; shift ;;
    -t) SECS=$2; shift ;;
    --rss-secs) RSS_SECS=$2; shift ;;
    --parts) PARTS=$2; shift ;;
    --transport) TRANSPORT=$2; shift ;;
    --queues) QUEUES=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "bench.sh: needs root" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=need.sh
. "$HERE/need.sh"
need jq:jq flock:util-linux taskset:util-linux
[[ " $PARTS " == *" peers "* ]] && need trafgen:netsniff-ng iperf3:iperf3 iperf:iperf python3:python3
[[ " $PARTS " == *" tcp "* ]] && need iperf3:iperf3
command -v go >/dev/null || { echo "bench.sh: go not found (Go 1.26 at /usr/local/go/bin?)" >&2; exit 2; }

ROOT=$(cd "$HERE/../.." && pwd)
LOCK=${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}
TMP=$(mktemp -d /tmp/bench.XXXXXX)
NS=rb$$
cleanup() {
  ip netns del $NS-tx 2>/dev/null || true
  ip netns del $NS-rx 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
BIN=$TMP/rfc2544
(cd "$ROOT" && go build -o "$BIN" ./cmd/rfc2544)
echo "# bench $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; reps $REPS; sizes $SIZES"

# ------------------------------------------------------------- 1. peers
if [[ " $PARTS " == *" peers "* ]]; then
  echo "## 1. generator and forwarding rates (peers.sh, medians of $REPS interleaved; engine: --transport $TRANSPORT --queues $QUEUES)"
  # peers.sh runs every generator under taskset on one CPU; N queues
  # need N (their threads pin themselves to the CPUs they may use).
  widen=""
  ((QUEUES > 1)) && widen="taskset -c 0-$((QUEUES - 1))"
  PEERS_TSV=$TMP/peers.tsv \
  PEERS_CUSTOM_TX="$widen $BIN gen --transport $TRANSPORT --queues $QUEUES --dev {dev} --dmac {dmac} --frame {frame} --secs {secs} --src-ip {src_ip} --dst-ip {dst_ip} --dport {dport}" \
  PEERS_CUSTOM_NAME=engine \
    flock $LOCK "$HERE/peers.sh" -T "trafgen iperf3 custom" -M "gen fwd" -s "$SIZES" -t "$SECS" -r "$REPS" --prefix rbp --veth-queues "$QUEUES" \
    2>"$TMP/peers.err" | sed -n '/^== Results/,/^(medians/p'
  awk -F'\t' 'NR > 1 { k = $4 " " $6; v = ($4 == "gen" ? $8 : $9); n[$5, k]++; val[$5, k, n[$5, k]] = v; keys[k] = 1 }
    function med(t, k,   m, i, j, a, x) {
      m = n[t, k]; if (!m) return 0
      for (i = 1; i <= m; i++) a[i] = val[t, k, i] + 0
      for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) }
    END {
      printf "%-4s %5s %10s %10s %10s %14s %14s\n", "mode", "frame", "engine", "trafgen", "iperf3", "engine/trafgen", "engine/iperf3"
      for (k in keys) {
        split(k, p, " "); e = med("engine", k); tg = med("trafgen", k); i3 = med("iperf3", k)
        printf "%-4s %5s %10.0f %10.0f %10s %14.3f %14s\n", p[1], p[2], e, tg, (i3 ? sprintf("%.0f", i3) : "-"),
          (tg ? e / tg : 0), (i3 ? sprintf("%.3f", e / i3) : "-")
      } }' "$TMP/peers.tsv" | sort -k1,1 -k2n
fi

# ------------------------------------------------------------- 2. pacing
if [[ " $PARTS " == *" pacing "* ]]; then
  echo "## 2. pacing: offered vs intended, 64-byte frames, ${SECS}s each"
  ip netns add $NS-tx && ip netns add $NS-rx
  ip -n $NS-tx link add p1 type veth peer name p2 netns $NS-rx
  ip -n $NS-tx link set p1 up && ip -n $NS-rx link set p2 up
  txp() { ip -n $NS-tx -j -s link show dev p1 | jq '.[0].stats64.tx.packets + .[0].stats64.tx.dropped'; }
  # sample: "TIME COUNT", the tx counter (sysfs of the namespace) read
  # between two clock readings in one shell, TIME their midpoint: the
  # skew of separate `date` and `ip | jq` calls (tens of ms on a busy box)
  # was a few percent of a 1 s window.
  sample() {
    ip netns exec $NS-tx sh -c 'a=$(date +%s.%N); p=$(cat /sys/class/net/p1/statistics/tx_packets /sys/class/net/p1/statistics/tx_dropped); b=$(date +%s.%N); echo $a $p $b' |
      awk '{printf "%.9f %d\n", ($1 + $4) / 2, $2 + $3}'
  }
  # gen RATE: one paced run of SECS+1 s; sets off (the generator's own
  # OfferedFPS), if_fps (the interface counter's rise over [0.5 s, SECS+0.5 s]
  # of the run, timed here) and if_count (the whole run's counter rise).
  gen() {
    local c0 c3 s1 s2
    c0=$(txp)
    ip netns exec $NS-tx taskset -c 0 "$BIN" gen --dev p1 --dmac 02:00:00:00:00:99 --frame 64 --secs "$((SECS + 1))s" --json --rate "$1" >"$TMP/gen.json" &
    local pid=$!
    sleep 0.5; s1=$(sample)
    sleep "$SECS"; s2=$(sample)
    wait $pid
    c3=$(txp)
    off=$(jq .OfferedFPS "$TMP/gen.json")
    if_fps=$(awk -v a="$s1" -v b="$s2" 'BEGIN{split(a, x, " "); split(b, y, " "); printf "%.1f", (y[2] - x[2]) / (y[1] - x[1])}')
    if_count=$((c3 - c0))
  }
  exec 9>"$LOCK"; flock 9
  ip netns exec $NS-tx taskset -c 0 "$BIN" gen --dev p1 --dmac 02:00:00:00:00:99 --frame 64 --secs "${SECS}s" --json --rate 0 >"$TMP/gen.json"
  ceil=$(jq .OfferedFPS "$TMP/gen.json")
  printf 'generator ceiling (full speed): %.0f fps\n' "$ceil"
  printf '%6s %12s %12s %10s %12s %10s %12s %10s\n' "pct" "intended" "if_fps" "if_err%" "gen_offered" "gen_err%" "planned" "if_count"
  worst=0 miscount=0
  for pct in 1 5 10 25 50 75 90; do
    rate=$(awk -v c="$ceil" -v p=$pct 'BEGIN{printf "%.0f", c * p / 100}')
    gen "$rate"
    err=$(awk -v o="$if_fps" -v r="$rate" 'BEGIN{printf "%.3f", (o / r - 1) * 100}')
    gerr=$(awk -v o="$off" -v r="$rate" 'BEGIN{printf "%.3f", (o / r - 1) * 100}')
    planned=$(awk -v r="$rate" -v s="$((SECS + 1))" 'BEGIN{x = r * s; printf "%d", (x == int(x) ? x : int(x) + 1)}')
    printf '%5s%% %12s %12s %10s %12.1f %10s %12s %10s\n' $pct "$rate" "$if_fps" "$err" "$off" "$gerr" "$planned" "$if_count"
    worst=$(awk -v w="$worst" -v e="$err" 'BEGIN{e = (e < 0 ? -e : e); print (e > w ? e : w)}')
    ((if_count == planned)) || miscount=$((miscount + 1))
  done
  flock -u 9
  echo "pacing worst |error| by the interface counter: ${worst}% (target 0.5%); runs whose interface count differs from the plan: $miscount"
fi

# ------------------------------------------------------------- 3. engine
if [[ " $PARTS " == *" engine "* ]]; then
  echo "## 3. full engine through the lab DUT, and RSS of a ${RSS_SECS}s trial at full speed"
  (cd "$ROOT" && RFC2544_BENCH=1 RFC2544_BENCH_REPS=$REPS RFC2544_BENCH_SECS=$RSS_SECS \
    flock $LOCK go test -count=1 -timeout 20m -run 'TestBenchForward|TestBenchLongTrialRSS' -v ./trials) |
    grep -E 'BENCH|FAIL|^ok|rep [0-9]'
fi

# ------------------------------------------------------------- 4. tcp
if [[ " $PARTS " == *" tcp "* ]]; then
  echo "## 4. RFC 6349 transfer vs iperf3, same lab, same window and connections"
  (cd "$ROOT" && RFC2544_BENCH=1 flock $LOCK go test -count=$REPS -timeout 20m -run '^TestBenchTCPIperf3$' -v ./trials) |
    grep -E 'seed [0-9]+:|rfc2544 tcp:|iperf3 -w|FAIL|^ok'
fi
