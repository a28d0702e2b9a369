#!/bin/bash
# forge-recon options: --smaps none falls back to coil-by-coil root-sum-of-squares although the file has
# maps; --fieldmap none and --reference none ignore the stored field map and phantom; --tolerance stops
# the solve early once the relative gradient meets it. The facts are read from each run's --report; the
# warnings and the progress lines they print are checked as printed.
#   usage: test_options.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
"$GEN" -m 32 -c 4 -n 0.01 -o "$W/sl.h5" >/dev/null || fail "generator failed"
run() {  # name, forge-recon arguments; the run's report is $W/name.json
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" --device cpu --report "$W/$name.json" >"$W/$name.stdout" 2>"$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: forge-recon failed"; }
}
rep() { report_get "$W/$1.json" "$2"; }  # run name, key path

run nosmaps "$W/sl.h5" --smaps none -n 3 --tolerance 0
grep -q 'reconstructing each coil and combining by root-sum-of-squares' "$W/nosmaps.stderr" || fail "--smaps none: no coil-by-coil fallback"
[ "$(rep nosmaps operator.sense)" = false ] || fail "--smaps none: still SENSE"
grep -q 'SENSE' "$W/nosmaps.stdout" && fail "--smaps none: still SENSE in the summary line"
# one solve per coil, in coil order, of 3 iterations each
[ "$(rep nosmaps 'reconstructions.0.solves.*.coil' | tr '\n' ' ')" = "0 1 2 3 " ] \
    || fail "--smaps none: the 4 coils were not reconstructed one by one ($(rep nosmaps 'reconstructions.0.solves.*.coil' | tr '\n' ' '))"
[ "$(rep nosmaps 'reconstructions.0.solves.*.iterations' | tr '\n' ' ')" = "3 3 3 3 " ] || fail "--smaps none: not 3 iterations per coil"
grep -q 'recon coil 4: iteration 3/3' "$W/nosmaps.stderr" || fail "--smaps none: no progress line of coil 4"
[ -s "$W/nosmaps.nii" ] || fail "--smaps none: no image"
echo "ok  --smaps none: coil by coil"

"$RECON" --demo --demo-size 16 --demo-slices 1 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>&1 || fail "demo failed"
run nofm "$W/demo.h5" --fieldmap none --reference none -n 2
[ "$(rep nofm data.field_map) $(rep nofm reconstructions.0.field_correction)" = "false false" ] \
    || fail "--fieldmap none: the stored field map was used"
grep -q 'no field map' "$W/nofm.stdout" || fail "--fieldmap none: no note that there is no field map"
[ "$(rep nofm reconstructions.0.quality)" = "[]" ] || fail "--reference none: the stored phantom was used"
grep -q 'NRMSE' "$W/nofm.stdout" && fail "--reference none: an NRMSE was printed"
echo "ok  --fieldmap none, --reference none"

# tolerance: 200 iterations allowed, stops when ||gradient|| <= 1e-3 ||initial gradient||
run tol "$W/sl.h5" -n 200 --tolerance 1e-3
[ "$(rep tol reconstructions.0.solves.0.stop_reason)" = tolerance ] \
    || { tail -3 "$W/tol.stderr"; fail "--tolerance: the solve did not stop on the tolerance"; }
k=$(rep tol reconstructions.0.solves.0.iterations)
rel=$(rep tol reconstructions.0.solves.0.relative_gradient)
[ "$(rep tol solver.tolerance)" = 0.001 ] || fail "--tolerance: the report says tolerance $(rep tol solver.tolerance)"
[ -n "$k" ] && [ "$k" -lt 200 ] || fail "--tolerance: ran $k iterations"
le "$rel" 1e-3 || fail "--tolerance: relative gradient $rel above 1e-3"
grep -q "converged after $k iterations" "$W/tol.stderr" || { tail -3 "$W/tol.stderr"; fail "--tolerance: no line saying it converged"; }
n=$(grep -c 'recon: iteration' "$W/tol.stderr")
[ "$n" -eq "$k" ] || fail "--tolerance: $n progress lines for $k iterations"
echo "ok  --tolerance 1e-3: converged after $k of 200 iterations, relative gradient $rel"
