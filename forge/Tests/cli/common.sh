# Shared helpers for the forge-recon CLI tests (sourced by the test_*.sh scripts).
set -u
# File listings (ls) compared as strings sort the same in every locale.
export LC_ALL=C
# --operator auto prices with the rates written in the code (forge/Recon/OperatorChoice.h): the same choice on every
# machine, and in every process of one test
export FORGE_COST_MODEL=fixed
fail() { echo "FAIL: $*" >&2; exit 1; }
# fresh work folder
workdir() { rm -rf "$1" && mkdir -p "$1" || fail "cannot create $1"; }
# number from a line of forge-recon's output: field <regex-before-number> <file>
number_after() { sed -n "s/.*$1 *\([0-9.eE+-]*\).*/\1/p" "$2" | head -n 1; }
# a <= b (floating point)
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
# Values of a forge-recon --report file (JSON; docs/forge-recon.md has the schema), one per line:
#   report_get FILE key.path        e.g. operator.name, reconstructions.0.quality.0.nrmse
# A list entry is named by its index; '*' takes every entry (reconstructions.0.solves.*.iterations). Strings
# print as they are; numbers, booleans, null, lists and objects as JSON writes them. A missing key fails.
report_get() {
    python3 - "$1" "$2" <<'PYEOF'
import json, sys
path, keys = sys.argv[1], [k for k in sys.argv[2].split(".") if k]
def walk(v, ks):
    if not ks:
        yield v
        return
    k, rest = ks[0], ks[1:]
    if k == "*":
        for x in (v if isinstance(v, list) else list(v.values())):
            yield from walk(x, rest)
    elif isinstance(v, list):
        yield from walk(v[int(k)], rest)
    else:
        yield from walk(v[k], rest)
try:
    for v in walk(json.load(open(path)), keys):
        print(v if isinstance(v, str) else json.dumps(v))
except (KeyError, IndexError, ValueError, TypeError) as e:
    sys.exit(f"report_get: {path} has no '{sys.argv[2]}' ({type(e).__name__}: {e})")
PYEOF
}
# The number of entries of a list (or object) in a report: report_len FILE key.path
report_len() { python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in [k for k in sys.argv[2].split(".") if k]: v = v[int(k)] if isinstance(v, list) else v[k]
print(len(v))' "$1" "$2"; }
