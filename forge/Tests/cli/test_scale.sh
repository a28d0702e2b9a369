#!/bin/bash
# forge-recon's image does not depend on the scale of the data or of the coil maps: the demo's spiral file with
# maps x1e5 (BART's phantom -S maps reach 1.3e5) and data x1e8 gives the same image, scaled (compared after the
# least-squares scale fit); so do data x1e30 with every operator. Values that no float image can hold (data
# x1e30 with maps x1e-30: an image near 1e60) are refused: one line, exit 2, no output.
#   usage: test_scale.sh FORGE_RECON FORGE_MRD_CFL WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3
workdir "$W"
"$RECON" --demo --demo-size 24 --demo-slices 1 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>"$W/demo.stderr" \
    || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
# 5 iterations: 1e5 and 1e8 are no powers of two, so the scaled file rounds differently, and CG in float amplifies
# rounding differences as it nears convergence (on this spiral about 10x per 2 iterations from the 8th, 2e-4 at the
# 10th, whatever the scale); at 5 they are 1e-6, so the comparison measures the scaling
run() {  # name, forge-recon arguments; the run's report is $W/name.json
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" -n 5 --device cpu --report "$W/$name.json" >"$W/$name.stdout" 2>"$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: forge-recon failed"; }
}
nrmse() { report_get "$W/$1.json" reconstructions.0.quality.0.nrmse; }
# the images of two runs agree to 1e-4 after the scale fit
same_image() {
    local d
    d=$("$CFL" compare "$W/$1.nii" "$W/$2.nii" | sed -n 's/relative difference //p')
    [ -n "$d" ] || fail "could not compare $1.nii and $2.nii"
    le "$d" 1e-4 || fail "$2: the image differs from $1's by $d (relative, after the scale fit)"
    echo "$d"
}

"$CFL" scale "$W/demo.h5" "$W/big.h5" 1e8 1e5 || fail "could not write the scaled file"
"$CFL" scale "$W/demo.h5" "$W/huge.h5" 1e30 1 || fail "could not write the x1e30 file"
for op in dft nufft toeplitz; do
    run "ref_$op" "$W/demo.h5" --operator $op
    run "big_$op" "$W/big.h5" --operator $op
    run "huge_$op" "$W/huge.h5" --operator $op
    a=$(nrmse "ref_$op"); b=$(nrmse "big_$op")
    le "$a" 0.5 || fail "$op: NRMSE $a of the unscaled file (an all-zero image gives 1)"
    d=$(same_image "ref_$op" "big_$op") || exit 1
    e=$(same_image "ref_$op" "huge_$op") || exit 1
    echo "ok  $op: maps x1e5 and data x1e8: NRMSE $b (unscaled $a), image difference $d; data x1e30: $e"
done

# an image beyond the float range: a clear error, exit 2, nothing written
"$CFL" scale "$W/demo.h5" "$W/impossible.h5" 1e30 1e-30 || fail "could not write the impossible file"
"$RECON" "$W/impossible.h5" -o "$W/impossible" -n 3 --device cpu >"$W/impossible.stdout" 2>"$W/impossible.stderr"
rc=$?
[ $rc -eq 2 ] || { cat "$W/impossible.stderr" >&2; fail "data x1e30 with maps x1e-30: exit $rc, expected 2"; }
[ "$(grep -c 'forge-recon: error:' "$W/impossible.stderr")" -eq 1 ] || { cat "$W/impossible.stderr" >&2; fail "not one error line"; }
grep -q 'float range' "$W/impossible.stderr" || { cat "$W/impossible.stderr" >&2; fail "the error does not say what overflowed"; }
ls "$W"/impossible.nii "$W"/impossible.png >/dev/null 2>&1 && fail "the refused run left an output"
echo "ok  data x1e30 with maps x1e-30: $(grep 'forge-recon: error:' "$W/impossible.stderr")"
