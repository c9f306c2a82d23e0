#!/usr/bin/env bash
# soak.sh - the gating lab tests (every test of a *_linux_test.go file that
# is not a truth claim; internal/truth/campaign gating lists them) run K
# times, and how often each passed. A gating test that fails more than once
# in 20 runs is fixed, or its claim moves to the truth campaign.
#
# Runs hold the lab lock ($RFC2544_LAB_LOCK, default /tmp/rfc2544-lab.lock).
# Run as root, like CI; a busy machine is fair game (CI's machines are).
#
# Usage: internal/truth/soak.sh [-k RUNS] [-o OUT]
set -euo pipefail
export LC_ALL=C PATH="/usr/local/go/bin:$PATH"

K=10 OUT=
while (($#)); do
  case $1 in
    -k) K=$2; shift ;;
    -o) OUT=$2; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (see -h)" >&2; exit 2 ;;
  esac
  shift
done
((EUID == 0)) || { echo "soak.sh: needs root (the lab)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
OUT=${OUT:-$(mktemp -d /tmp/rfc2544-soak.XXXX)}
mkdir -p "$OUT"
LOCK=${RFC2544_LAB_LOCK:-/tmp/rfc2544-lab.lock}
go build -o "$OUT/campaign" ./internal/truth/campaign
mapfile -t PKGS < <("$OUT/campaign" gating)
echo "soak: $K runs of the gating lab tests, $(uname -r), $(nproc) CPUs, $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'); runs in $OUT"
t0=$(date +%s)
files=()
for ((i = 1; i <= K; i++)); do
  f="$OUT/run$i.json"
  : >"$f"
  for line in "${PKGS[@]}"; do
    pkg=${line%%$'\t'*} re=${line#*$'\t'}
    flock "$LOCK" go test -count=1 -p 1 -timeout 30m -json -run "$re" "$pkg" >>"$f" 2>&1 || true
  done
  echo "run $i/$K done at $(($(date +%s) - t0)) s"
  files+=("$f")
done
echo
"$OUT/campaign" soak "${files[@]}"
