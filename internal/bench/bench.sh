#!/usr/bin/env bash
# bench.sh - the raw engine measured against its peers in the same run.
#
#   1. generator-only and through-DUT rates of the engine's generator
#      (`rfc2544 gen`), trafgen and iperf3, interleaved, with
#      /work/shared/bench/peers.sh (its PEERS_CUSTOM_TX hook);
#   2. pacing accuracy: offered vs intended load from 1 % to 90 % of the
#      generator's own ceiling, on a private veth pair;
#   3. the full engine (generator + receiver) through the lab's kernel DUT vs
#      trafgen and iperf3 in the same lab, and the RSS of a long trial at full
#      speed (go test -run TestBench ./trials with RFC2544_BENCH=1).
#
# Every part that sends traffic holds /tmp/rfc2544-traffic.lock. Namespaces
# are created with a unique prefix and deleted on exit. Needs root, trafgen
# (netsniff-ng), iperf3, jq.
#
# Usage: internal/bench/bench.sh [-r REPS] [-s "64 512 1518"] [-t SECS] [--rss-secs N] [--parts "peers pacing engine"]
set -euo pipefail
export LC_ALL=C

REPS=3 SIZES="64 512 1518" SECS=3 RSS_SECS=60 PARTS="peers pacing engine"
while (($#)); do
  case $1 in
    -r) REPS=$2; shift ;;
    -s) SIZES=$2; shift ;;
    -t) SECS=$2; shift ;;
    --rss-secs) RSS_SECS=$2; shift ;;
    --parts) PARTS=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "bench.sh: needs root" >&2; exit 2; }
for c in jq flock go; do command -v $c >/dev/null || { echo "bench.sh: $c not found" >&2; exit 2; }; done

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOCK=/tmp/rfc2544-traffic.lock
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
  echo "## 1. generator and forwarding rates (peers.sh, medians of $REPS interleaved)"
  PEERS_TSV=$TMP/peers.tsv \
  PEERS_CUSTOM_TX="$BIN gen --dev {dev} --dmac {dmac} --frame {frame} --secs {secs} --src-ip {src_ip} --dst-ip {dst_ip} --dport {dport}" \
  PEERS_CUSTOM_NAME=engine \
    flock $LOCK /work/shared/bench/peers.sh -T "trafgen iperf3 custom" -M "gen fwd" -s "$SIZES" -t "$SECS" -r "$REPS" --prefix rbp \
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
  gen() { flock $LOCK ip netns exec $NS-tx taskset -c 0 "$BIN" gen --dev p1 --dmac 02:00:00:00:00:99 --frame 64 --secs "${SECS}s" --json "$@"; }
  txp() { ip -n $NS-tx -j -s link show dev p1 | jq '.[0].stats64.tx.packets + .[0].stats64.tx.dropped'; }
  ceil=$(gen --rate 0 | jq .OfferedFPS)
  printf 'generator ceiling (full speed): %.0f fps\n' "$ceil"
  printf '%6s %12s %12s %12s %10s %12s\n' "pct" "intended" "offered" "err%" "planned" "if_counted"
  worst=0
  for pct in 1 5 10 25 50 75 90; do
    rate=$(awk -v c="$ceil" -v p=$pct 'BEGIN{printf "%.0f", c * p / 100}')
    t0=$(txp); out=$(gen --rate "$rate"); t1=$(txp)
    off=$(jq .OfferedFPS <<<"$out")
    err=$(awk -v o="$off" -v r="$rate" 'BEGIN{printf "%.3f", (o / r - 1) * 100}')
    planned=$(awk -v r="$rate" -v s="$SECS" 'BEGIN{x = r * s; printf "%d", (x == int(x) ? x : int(x) + 1)}')
    printf '%5s%% %12s %12.1f %12s %10s %12s\n' $pct "$rate" "$off" "$err" "$planned" $((t1 - t0))
    worst=$(awk -v w="$worst" -v e="$err" 'BEGIN{e = (e < 0 ? -e : e); print (e > w ? e : w)}')
  done
  echo "pacing worst |error|: ${worst}% (target 0.5%)"
fi

# ------------------------------------------------------------- 3. engine
if [[ " $PARTS " == *" engine "* ]]; then
  echo "## 3. full engine through the lab DUT, and RSS of a ${RSS_SECS}s trial at full speed"
  (cd "$ROOT" && RFC2544_BENCH=1 RFC2544_BENCH_REPS=$REPS RFC2544_BENCH_SECS=$RSS_SECS \
    flock $LOCK go test -count=1 -timeout 20m -run 'TestBenchForward|TestBenchLongTrialRSS' -v ./trials) |
    grep -E 'BENCH|FAIL|^ok|rep [0-9]'
fi
