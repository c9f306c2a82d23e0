# need.sh - sourced by the bench scripts: need CMD:PACKAGE... installs, with
# apt-get (as root), the Debian package of each command that is missing.
need() {
  local missing=() c
  for c in "$@"; do
    command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || { echo "missing ${missing[*]} and no apt-get to install them" >&2; exit 2; }
  echo "# installing ${missing[*]} (apt-get)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    { echo "apt-get install ${missing[*]} failed" >&2; exit 2; }
}
