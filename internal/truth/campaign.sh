#!/usr/bin/env bash
# campaign.sh - the truth campaign: every accuracy claim the README makes,
# measured N times against the lab's ground truth with parameters drawn at
# run time, and the table the README quotes.
#
# A claim is a test that calls truth.New (internal/truth): CI skips it
# (statistical: it would fail now and then by chance on a busy 2-CPU VM);
# here it runs with RFC2544_TRUTH=1. Run i of N draws with the seed
# SEED+i (RFC2544_SEED, which every claim's draws come from); each line of
# the failure list names its seed, and
#
#   RFC2544_TRUTH=1 RFC2544_SEED=<seed> go test -count=1 -timeout 30m -run '^<Test>$' ./<pkg>
#
# replays it. Runs hold the lab lock ($RFC2544_LAB_LOCK, default
# /tmp/rfc2544-lab.lock) so nothing else sends traffic meanwhile; run it on a
# quiet machine, as root. Output: the table on stdout, every run's go test
# -json in OUT (default a new /tmp/rfc2544-truth.XXXX).
#
# Usage: internal/truth/campaign.sh [-n RUNS] [-s SEED] [-r TEST-REGEXP] [-x TEST-REGEXP] [-o OUT]
#   -n RUNS   runs of every claim (default 5)
#   -s SEED   first seed (default: drawn from the clock, printed)
#   -r REGEXP only the claims' tests whose name matches (default all)
#   -x REGEXP leave out the claims' tests whose name matches
#   -o OUT    folder for the runs' go test -json files
set -euo pipefail
export LC_ALL=C PATH="/usr/local/go/bin:$PATH"

N=5 SEED=$(date +%s%N) MATCH=. SKIP='^$' OUT=
while (($#)); do
  case $1 in
    -n) N=$2; shift ;;
    -s) SEED=$2; shift ;;
    -r) MATCH=$2; shift ;;
    -x) SKIP=$2; shift ;;
    -o) OUT=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "campaign.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "campaign.sh: needs root (the lab)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
OUT=${OUT:-$(mktemp -d /tmp/rfc2544-truth.XXXX)}
mkdir -p "$OUT"
LOCK=${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}
go build -o "$OUT/campaign" ./internal/truth/campaign
mapfile -t PKGS < <("$OUT/campaign" list)
echo "truth campaign: $N runs from seed $SEED, claims matching '$MATCH', $(uname -r), $(nproc) CPUs, $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'); runs in $OUT"
t0=$(date +%s)
files=()
for ((i = 1; i <= N; i++)); do
  s=$((SEED + i))
  f="$OUT/run$i-seed-$s.json"
  : >"$f"
  for line in "${PKGS[@]}"; do
    pkg=${line%%$'\t'*} re=${line#*$'\t'}
    # The package's claims that match MATCH.
    names=$(sed 's/^\^(//; s/)\$$//' <<<"$re" | tr '|' '\n' | grep -E -- "$MATCH" | grep -Ev -- "$SKIP" | paste -sd'|' || true)
    [[ -n $names ]] || continue
    echo "run $i/$N seed $s: $pkg ^($names)\$ (at $(($(date +%s) - t0)) s)"
    RFC2544_TRUTH=1 RFC2544_SEED=$s flock "$LOCK" go test -count=1 -p 1 -timeout 60m -json -run "^($names)\$" "$pkg" >>"$f" 2>&1 || true
  done
  files+=("$f")
done
echo "truth campaign: done in $(($(date +%s) - t0)) s ($(date -u +%Y-%m-%d), seeds $((SEED + 1))…$((SEED + N)))"
echo
"$OUT/campaign" table "${files[@]}"
