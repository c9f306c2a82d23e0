#!/usr/bin/env bash
# xdp.sh - the AF_XDP generator (internal/afxdp, run as internal/bench/xdpgen)
# against trafgen, generator-only, in the same run: peers.sh builds its
# namespaces and veth pairs, runs both tools interleaved (its PEERS_CUSTOM_TX
# hook) on the same CPU, counts frames with the tx veth's counters (not with
# what the tools say) and this script prints the medians and the ratio
# xdp/trafgen per frame size. Target (issue 14): >= 1.4 at 64 B.
# -M "gen fwd" also sends through the namespace DUT (peers.sh fwd mode) and
# compares the frames/s the DUT delivered (the receiving veth's counter):
# there the DUT, not the tester, should be the limit (ratio about 1.0).
#
# Sends traffic: holds the lab lock ($RFC2544_LAB_LOCK, default
# /tmp/rfc2544-lab.lock). Needs root; installs trafgen (netsniff-ng) and jq
# with apt-get when missing. Namespaces are deleted on exit (peers.sh).
#
# Usage: internal/bench/xdp.sh [-r REPS] [-s "64 512 1518"] [-t SECS] [-M "gen fwd"]
set -euo pipefail
export LC_ALL=C

REPS=5 SIZES="64" SECS=3 MODES=gen
while (($#)); do
  case $1 in
    -r) REPS=$2; shift ;;
    -s) SIZES=$2; shift ;;
    -t) SECS=$2; shift ;;
    -M) MODES=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "xdp.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "xdp.sh: needs root" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=need.sh
. "$HERE/need.sh"
need jq:jq flock:util-linux taskset:util-linux trafgen:netsniff-ng
command -v go >/dev/null || { echo "xdp.sh: go not found (Go 1.26 at /usr/local/go/bin?)" >&2; exit 2; }

ROOT=$(cd "$HERE/../.." && pwd)
LOCK=${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}
TMP=$(mktemp -d /tmp/xdpbench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
BIN=$TMP/xdpgen
(cd "$ROOT" && go build -o "$BIN" ./internal/bench/xdpgen)
echo "# xdp bench $(date -u +%FT%TZ) $(uname -r) $(nproc) CPUs; reps $REPS; sizes $SIZES; window ${SECS}s; modes $MODES"

PEERS_TSV=$TMP/peers.tsv \
PEERS_CUSTOM_TX="$BIN --dev {dev} --dmac {dmac} --frame {frame} --secs {secs} --src-ip {src_ip} --dst-ip {dst_ip} --dport {dport} >>$TMP/xdpgen.jsonl" \
PEERS_CUSTOM_NAME=xdp \
  flock "$LOCK" "$HERE/peers.sh" -T "trafgen custom" -M "$MODES" -s "$SIZES" -t "$SECS" -r "$REPS" --prefix rbx \
  2>"$TMP/peers.err" | sed -n '/^== Results/,/^(medians/p' || { cat "$TMP/peers.err" >&2; exit 1; }
grep -E 'error|warning' "$TMP/peers.err" >&2 || true
# which AF_XDP path ran (xdpgen's own report, one JSON line per run)
[[ -s $TMP/xdpgen.jsonl ]] && jq -r '"xdp path: \(.features.zero_copy | if . then "zero-copy" else "copy" end), need-wakeup \(.features.need_wakeup), tx budget \(.features.tx_budget)"' "$TMP/xdpgen.jsonl" | sort | uniq -c
# one row per rep: mode/frame size, tool, frames/s, rep; gen counts what the
# sending veth sent (tx_pps), fwd what the DUT delivered (rx_pps)
awk -F'\t' 'NR > 1 { print $4 "/" $6, $5, ($4 == "gen" ? $8 : $9), $31 }' "$TMP/peers.tsv" >"$TMP/rows"
echo "## per repetition (frames/s: gen by the sending veth, fwd by the receiving veth)"
awk '{ v[$1, $4, $2] = $3; f[$1] = 1; r[$4] = 1 }
  END { printf "%9s %3s %10s %10s %7s\n", "mode/frame", "rep", "xdp", "trafgen", "ratio"
    for (F in f) for (k in r) if (v[F, k, "trafgen"] > 0)
      printf "%9s %3s %10.0f %10.0f %7.3f\n", F, k, v[F, k, "xdp"], v[F, k, "trafgen"], v[F, k, "xdp"] / v[F, k, "trafgen"] }' "$TMP/rows" | (sed -u 1q; sort -k1,1V -k2n)
echo "## medians"
awk 'function med(F, t,   m, i, j, a, x) {
      m = 0; for (k in r) if ((F, k, t) in v) a[++m] = v[F, k, t]
      for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2) }
  { v[$1, $4, $2] = $3; f[$1] = 1; r[$4] = 1 }
  END { printf "%9s %10s %10s %12s %18s\n", "mode/frame", "xdp", "trafgen", "xdp/trafgen", "median of ratios"
    for (F in f) {
      n = 0; for (k in r) if (v[F, k, "trafgen"] > 0) ratio[++n] = v[F, k, "xdp"] / v[F, k, "trafgen"]
      for (i = 2; i <= n; i++) { x = ratio[i]; for (j = i - 1; j >= 1 && ratio[j] > x; j--) ratio[j + 1] = ratio[j]; ratio[j + 1] = x }
      mr = (n % 2 ? ratio[(n + 1) / 2] : (ratio[n / 2] + ratio[n / 2 + 1]) / 2)
      x = med(F, "xdp"); t = med(F, "trafgen")
      printf "%9s %10.0f %10.0f %12.3f %18.3f\n", F, x, t, (t ? x / t : 0), mr } }' "$TMP/rows" | (sed -u 1q; sort -k1,1V)
