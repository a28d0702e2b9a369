#!/bin/bash
# forge-recon's stage timings: --report's "timing" (docs/forge-recon.md, "The report") has every stage, none
# negative, adding up with "other" to its total, which is the run's wall time (measured here around the process, less
# its start and exit); its per-frame stages add up to the run's; the last line printed is the same summary, whose
# terms add up to its total. The demo, the demo's file (SENSE, auto = dft) and the file with --operator toeplitz
# (kernels, right-hand side) and coil by coil (--smaps none).
#   usage: test_timing.sh FORGE_RECON WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
workdir "$W"
cd "$W" || fail "cd"
now() { date +%s.%N; }
run() {  # name, forge-recon arguments; the wall time goes to $W/name.wall
    local name=$1; shift
    local t0 t1
    t0=$(now)
    "$RECON" "$@" --device cpu --report "$W/$name.json" >"$W/$name.stdout" 2>"$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: forge-recon failed"; }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >"$W/$name.wall"
}
check() {  # name, mode
    python3 - "$W/$1.json" "$(cat "$W/$1.wall")" "$(tail -n 1 "$W/$1.stdout")" "$2" <<'PYEOF' || fail "$1: timing"
import json, re, sys
r, wall, line, mode = json.load(open(sys.argv[1])), float(sys.argv[2]), sys.argv[3], sys.argv[4]
t = r["timing"]
assert list(t) == ["total_s", "stages_s", "frames_s", "summary"], list(t)
keys = ["device", "read", "simulation", "coil_preprocessing", "coil_maps", "field_map", "operator_build", "rhs",
        "iterations", "write", "other"]
s = t["stages_s"]
assert list(s) == keys, list(s)
assert all(isinstance(s[k], (int, float)) and s[k] >= 0 for k in keys), s
total = t["total_s"]
# the stages and "other" are the run: they add up to the total (to rounding), which is the process's wall time
# less its start (loading the libraries) and its end (renaming the outputs, printing)
assert abs(sum(s.values()) - total) <= 1e-9 * total + 1e-12, (sum(s.values()), total)
assert total <= wall and total >= 0.85 * wall - 0.5, (total, wall)
# what no stage names stays small: a few percent (10% and 0.1 s allow for a machine busy with other work)
assert s["other"] <= 0.1 * total + 0.1, s
assert s["iterations"] > 0 and s["write"] > 0, s
if mode == "demo":
    assert s["simulation"] > 0 and s["coil_maps"] > 0 and s["field_map"] > 0 and s["read"] > 0, s
else:
    assert s["read"] > 0 and s["simulation"] == 0, s
# the old stages agree with the new ones
old = r["stages_s"]
assert abs(old["solve"] - (s["rhs"] + s["iterations"])) <= 1e-9, (old, s)
assert abs(old["operator_setup"] - s["operator_build"]) <= 1e-12 and old["total"] == total
# per (reconstruction, slice, frame): one entry for each, adding up to the run's stages (one process)
frames = t["frames_s"]
names = [rec["name"] for rec in r["reconstructions"]]
want = sorted((rec["name"], sv["slice"], sv["frame"]) for rec in r["reconstructions"] for sv in rec["solves"])
assert sorted(set(want)) == sorted((f["reconstruction"], f["slice"], f["frame"]) for f in frames), frames
for k, key in [("operator_build", "operator_build"), ("rhs", "rhs"), ("iterations", "iterations")]:
    assert abs(sum(f[k] for f in frames) - s[key]) <= 1e-9 * max(s[key], 1e-3), (k, frames, s)
assert all(f[k] >= 0 for f in frames for k in ("operator_build", "rhs", "iterations"))
# the summary line: printed last, the report's, its terms adding up to its total (each rounded to 0.01 s)
assert line == t["summary"], (line, t["summary"])
m = re.fullmatch(r"forge-recon: time ([0-9.]+) s = (.*)", line)
assert m, line
terms = [p.rsplit(" ", 1) for p in m.group(2).split(" + ")]
assert abs(float(m.group(1)) - total) <= 0.005 + 1e-9, (line, total)
assert abs(sum(float(v) for _, v in terms) - float(m.group(1))) <= 0.005 * (len(terms) + 1), line
labels = [k for k, _ in terms]
for want_label in ["maps", "build", "rhs", "solve", "write", "other"] + (["simulate"] if mode == "demo" else ["read"]):
    assert want_label in labels, (want_label, line)
print(f"ok  {sys.argv[1].rsplit('/', 1)[-1]}: {line} (wall {wall:.2f} s)")
PYEOF
}

run demo --demo --demo-size 32 --demo-slices 2 -n 10 -o "$W/demo"
check demo demo
run file "$W/demo.h5" -n 10 -o "$W/file"
check file file
run toeplitz "$W/demo.h5" -n 10 --operator toeplitz -o "$W/toeplitz"
check toeplitz file
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["timing"]["stages_s"]
assert s["operator_build"] > 0 and s["rhs"] > 0, s' "$W/toeplitz.json" || fail "toeplitz: no kernel build or right-hand side time"
run coils "$W/demo.h5" -n 3 --smaps none --operator nufft -o "$W/coils"
check coils file
[ "$(report_len "$W/coils.json" timing.frames_s)" = 2 ] || fail "coil by coil: not one frame entry per slice"
echo "ok  timing: stages add up to the wall time in the demo, the file mode, toeplitz and coil by coil"
