#!/bin/bash
# forge-recon --demo (small size for CI) writes NIfTI, PNG and ISMRMRD files; the field-corrected NRMSE is
# at least 2x better than the uncorrected one; 'forge-recon demo.h5' reproduces the corrected NRMSE.
#   usage: test_demo_roundtrip.sh FORGE_RECON WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
workdir "$W"
# -n 10 throughout keeps it fast (the default stopping rule runs about 16 iterations here)
"$RECON" --demo --demo-size 32 --demo-slices 2 -n 10 -o "$W/demo" --device cpu >"$W/demo.stdout" 2>"$W/demo.stderr" \
    || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
cat "$W/demo.stdout"
for f in demo.h5 demo_truth.nii demo_uncorrected.nii demo_corrected.nii demo_fieldmap.nii demo_comparison.png demo_corrected.png; do
    [ -s "$W/$f" ] || fail "demo did not write $f"
done
# plain progress lines when stderr is not a terminal
grep -q 'iteration 1/10 cost' "$W/demo.stderr" || fail "no plain progress lines on stderr"
unc=$(sed -n 's/^ *uncorrected *NRMSE \([0-9.]*\).*/\1/p' "$W/demo.stdout")
cor=$(sed -n 's/^ *field-corrected *NRMSE \([0-9.]*\).*/\1/p' "$W/demo.stdout")
[ -n "$unc" ] && [ -n "$cor" ] || fail "could not read the NRMSE lines"
le "$(awk -v c="$cor" 'BEGIN{print 2*c}')" "$unc" || fail "corrected NRMSE $cor is not 2x better than uncorrected $unc"
le "$cor" 0.1 || fail "corrected NRMSE $cor above 0.1"
echo "ok  demo: uncorrected $unc, corrected $cor"

"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip" --device cpu >"$W/rt.stdout" 2>"$W/rt.stderr" \
    || { cat "$W/rt.stderr" >&2; fail "round trip failed"; }
cat "$W/rt.stdout"
rt=$(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/rt.stdout" | head -n 1)
[ -n "$rt" ] || fail "round trip printed no NRMSE"
awk -v a="$rt" -v b="$cor" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "round trip NRMSE $rt differs from the demo's corrected NRMSE $cor"
[ -s "$W/roundtrip.nii" ] && [ -s "$W/roundtrip.png" ] || fail "round trip outputs missing"
# without field correction the file reproduces the uncorrected image
"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip_unc" --no-field-correction --device cpu -q >"$W/rtu.stdout" 2>"$W/rtu.stderr" \
    || { cat "$W/rtu.stderr" >&2; fail "uncorrected round trip failed"; }
rtu=$(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/rtu.stdout" | head -n 1)
awk -v a="$rtu" -v b="$unc" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "uncorrected round trip NRMSE $rtu differs from the demo's $unc"
echo "ok  round trip: corrected $rt, uncorrected $rtu"

# without -o the demo writes into ./forge_demo/ (created when missing), nothing into the current folder
mkdir -p "$W/cwd" && cd "$W/cwd" || fail "cd $W/cwd"
for run in 1 2; do  # the second run finds the folder there
    "$RECON" --demo --demo-size 16 --demo-slices 1 -n 2 --device cpu >"$W/default.stdout" 2>"$W/default.stderr" \
        || { cat "$W/default.stderr" >&2; fail "demo without -o failed (run $run)"; }
done
for f in demo.h5 demo_truth.nii demo_uncorrected.nii demo_corrected.nii demo_fieldmap.nii demo_comparison.png demo_corrected.png; do
    [ -s "$W/cwd/forge_demo/$f" ] || fail "demo without -o did not write forge_demo/$f"
done
[ "$(ls -A "$W/cwd")" = "forge_demo" ] || fail "demo without -o wrote into the current folder: $(ls -A "$W/cwd" | tr '\n' ' ')"
grep -q 'reproduce the corrected image with: forge-recon forge_demo/demo.h5' "$W/default.stdout" \
    || fail "the demo does not point at forge_demo/demo.h5"
echo "ok  demo without -o: outputs in forge_demo/"
