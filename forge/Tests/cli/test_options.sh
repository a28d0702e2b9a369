#!/bin/bash
# forge-recon options: --smaps none falls back to coil-by-coil root-sum-of-squares although the file has
# maps; --fieldmap none and --reference none ignore the stored field map and phantom; --tolerance stops
# the solve early once the relative gradient meets it.
#   usage: test_options.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
"$GEN" -m 32 -c 4 -n 0.01 -o "$W/sl.h5" >/dev/null || fail "generator failed"
run() {  # name, forge-recon arguments
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" --device cpu >"$W/$name.stdout" 2>"$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: forge-recon failed"; }
}

run nosmaps "$W/sl.h5" --smaps none -n 3 --tolerance 0
grep -q 'reconstructing each coil and combining by root-sum-of-squares' "$W/nosmaps.stderr" || fail "--smaps none: no coil-by-coil fallback"
grep -q 'SENSE' "$W/nosmaps.stdout" && fail "--smaps none: still SENSE"
grep -q 'recon coil 4: iteration 3/3' "$W/nosmaps.stderr" || fail "--smaps none: the 4 coils were not reconstructed one by one"
[ -s "$W/nosmaps.nii" ] || fail "--smaps none: no image"
echo "ok  --smaps none: coil by coil"

"$RECON" --demo --demo-size 16 --demo-slices 1 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>&1 || fail "demo failed"
run nofm "$W/demo.h5" --fieldmap none --reference none -n 2
grep -q 'no field map' "$W/nofm.stdout" || fail "--fieldmap none: the stored field map was used"
grep -q 'NRMSE' "$W/nofm.stdout" && fail "--reference none: the stored phantom was used"
echo "ok  --fieldmap none, --reference none"

# tolerance: 200 iterations allowed, stops when ||gradient|| <= 1e-3 ||initial gradient||
run tol "$W/sl.h5" -n 200 --tolerance 1e-3
line=$(grep 'converged after' "$W/tol.stderr") || { tail -3 "$W/tol.stderr"; fail "--tolerance: the solve did not report convergence"; }
k=$(echo "$line" | sed -n 's/.*converged after \([0-9]*\) iterations.*/\1/p')
rel=$(echo "$line" | sed -n 's/.*relative gradient \([0-9.eE+-]*\) <=.*/\1/p')
[ -n "$k" ] && [ "$k" -lt 200 ] || fail "--tolerance: ran $k iterations"
le "$rel" 1e-3 || fail "--tolerance: relative gradient $rel above 1e-3"
n=$(grep -c 'recon: iteration' "$W/tol.stderr")
[ "$n" -eq "$k" ] || fail "--tolerance: $n progress lines for $k iterations"
echo "ok  --tolerance 1e-3: converged after $k of 200 iterations, relative gradient $rel"
