# Shared helpers for the forge-recon CLI tests (sourced by the test_*.sh scripts).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
# fresh work folder
workdir() { rm -rf "$1" && mkdir -p "$1" || fail "cannot create $1"; }
# number from a line of forge-recon's output: field <regex-before-number> <file>
number_after() { sed -n "s/.*$1 *\([0-9.eE+-]*\).*/\1/p" "$2" | head -n 1; }
# a <= b (floating point)
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
