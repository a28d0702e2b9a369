#!/bin/bash
# Maps estimated from the data (docs/map-estimation.md):
# - ISMRMRD's own Cartesian Shepp-Logan (128x128, 8 coils): SENSE with estimated coil maps is within 1.25x the
#   NRMSE of SENSE with the file's csm, fully sampled and 2x accelerated with a 16-line calibration region and
#   a noise scan (pre-whitened), in seconds;
# - the demo: coil maps and field map estimated from the raw data reach 1.25x the true maps' NRMSE and beat
#   the uncorrected image 3x; the same from the files alone; --fieldmap estimate; --save-maps; refusals.
# NRMSEs and stage timings come from --report; the notes saying what was estimated are checked as printed.
#   usage: test_map_estimation.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
workdir "$W"
cd "$W" || fail "cd"
nrmse() { report_get "$1" reconstructions.0.quality.0.nrmse; }  # of a report
ratio_ok() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { exit !(a <= r * b) }'; }

# ---- demo: the whole path from raw data
"$RECON" --demo --demo-size 32 --demo-slices 2 -n 10 -o "$W/demo" --device cpu --report "$W/demo.json" \
    >"$W/demo.stdout" 2>"$W/demo.stderr" || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
cat "$W/demo.stdout"
unc=$(report_get "$W/demo.json" reconstructions.0.quality.0.nrmse)
cor=$(report_get "$W/demo.json" reconstructions.1.quality.0.nrmse)
est=$(report_get "$W/demo.json" reconstructions.2.quality.0.nrmse)
[ "$(report_get "$W/demo.json" reconstructions.2.name)" = "estimated maps" ] || fail "the demo's third reconstruction"
[ -n "$unc" ] && [ -n "$cor" ] && [ -n "$est" ] || fail "could not read the demo's NRMSE lines"
ratio_ok "$est" "$cor" 1.25 || fail "estimated-maps NRMSE $est above 1.25x the true maps' $cor"
ratio_ok "$(awk -v e="$est" 'BEGIN{print 3*e}')" "$unc" 1 || fail "estimated-maps NRMSE $est not 3x better than uncorrected $unc"
for f in demo_fieldmap_scan.h5 demo_estimated.nii demo_estimated_smaps.nii demo_estimated_fieldmap.nii; do
    [ -s "$W/$f" ] || fail "demo did not write $f"
done
echo "ok  demo: true maps $cor, estimated maps $est, uncorrected $unc"
# the same from the files alone
"$RECON" "$W/demo.h5" --smaps estimate --fieldmap-scan "$W/demo_fieldmap_scan.h5" --save-maps -n 10 -o "$W/raw" --device cpu \
    --report "$W/raw.json" >"$W/raw.stdout" 2>"$W/raw.stderr" || { cat "$W/raw.stderr" >&2; fail "recon from raw data failed"; }
cat "$W/raw.stdout"
grep -q 'estimated coil sensitivity maps' "$W/raw.stdout" || fail "no note about the estimated coil maps"
grep -q 'estimated the field map from 2 echoes' "$W/raw.stdout" || fail "no note about the estimated field map"
awk -v a="$(report_get "$W/raw.json" stages_s.coil_maps)" -v b="$(report_get "$W/raw.json" stages_s.field_map)" \
    'BEGIN { exit !(a > 0 && b > 0) }' || fail "the report times no coil-map and field-map estimation"
[ "$(report_get "$W/raw.json" operator.sense) $(report_get "$W/raw.json" data.field_map)" = "true true" ] \
    || fail "the estimated maps were not used"
raw=$(nrmse "$W/raw.json")
awk -v a="$raw" -v b="$est" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "raw-data NRMSE $raw differs from the demo's estimated-maps NRMSE $est"
[ -s "$W/raw_smaps.nii" ] && [ -s "$W/raw_fieldmap.nii" ] || fail "--save-maps wrote no maps"
# the field-map scan's own field map from its echoes
"$RECON" "$W/demo_fieldmap_scan.h5" --fieldmap estimate -n 10 -o "$W/fm" --device cpu >"$W/fm.stdout" 2>"$W/fm.stderr" \
    || { cat "$W/fm.stderr" >&2; fail "--fieldmap estimate failed"; }
grep -q 'estimated the field map from 2 echoes (TE 2.00, 4.50 ms' "$W/fm.stdout" || fail "--fieldmap estimate: no note"
# refusals: one echo, a scan on another grid, two field maps at once
"$RECON" "$W/demo.h5" --fieldmap estimate -o "$W/bad1" --device cpu >"$W/bad1.stdout" 2>"$W/bad1.stderr"
[ $? -eq 2 ] && grep -q 'expected at least 2 contrasts' "$W/bad1.stderr" || fail "--fieldmap estimate on one echo not refused"
"$RECON" --demo --demo-size 16 --demo-slices 2 -n 1 -o "$W/small" --device cpu -q >/dev/null 2>&1 || fail "small demo failed"
"$RECON" "$W/demo.h5" --fieldmap-scan "$W/small_fieldmap_scan.h5" -o "$W/bad2" --device cpu >/dev/null 2>"$W/bad2.stderr"
[ $? -eq 2 ] && grep -q 'must share the image grid' "$W/bad2.stderr" || fail "field-map scan on another grid not refused"
"$RECON" "$W/demo.h5" --fieldmap estimate --fieldmap-scan "$W/demo_fieldmap_scan.h5" -o "$W/bad3" --device cpu >/dev/null 2>"$W/bad3.stderr"
[ $? -eq 2 ] && grep -q 'choose one' "$W/bad3.stderr" || fail "two field-map sources not refused"
echo "ok  from raw data: $raw; --fieldmap estimate; refusals"

# ---- ISMRMRD's Shepp-Logan
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
"$GEN" -m 128 -c 8 -o "$W/sl.h5" >/dev/null || fail "generator failed"
"$GEN" -m 128 -c 8 -a 2 -w 16 -C -o "$W/sla.h5" >/dev/null || fail "generator -a 2 -w 16 -C failed"
for f in sl sla; do
    "$RECON" "$W/$f.h5" -n 10 -o "$W/${f}_file" --device cpu --report "$W/${f}_file.json" >"$W/${f}_file.stdout" 2>&1 \
        || fail "$f with its csm failed"
    start=$(date +%s.%N)
    "$RECON" "$W/$f.h5" --smaps estimate -n 10 -o "$W/${f}_est" --device cpu --report "$W/${f}_est.json" \
        >"$W/${f}_est.stdout" 2>&1 || fail "$f estimated failed"
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b - a}')
    cat "$W/${f}_est.stdout" | grep -v iteration
    a=$(nrmse "$W/${f}_file.json"); b=$(nrmse "$W/${f}_est.json")
    ratio_ok "$b" "$a" 1.25 || fail "$f: NRMSE with estimated maps $b above 1.25x the file maps' $a"
    le "$secs" 60 || fail "$f: the reconstruction with estimated maps took $secs s"
    echo "ok  $f: csm $a, estimated $b ($secs s)"
done
grep -q 'noise pre-whitening from 256 samples of 1 noise scan' "$W/sla_est.stdout" || fail "no pre-whitening from the noise scan"
grep -q 'central 24x16 cycles/FOV' "$W/sla_est.stdout" || fail "the calibration region was not found"
# without a calibration region the maps cannot be estimated: refused by name
"$GEN" -m 64 -c 4 -a 2 -o "$W/nocal.h5" >/dev/null || fail "generator -a 2 failed"
"$RECON" "$W/nocal.h5" --smaps estimate -o "$W/nocal" --device cpu >/dev/null 2>"$W/nocal.stderr"
[ $? -eq 2 ] && grep -q 'acquire a calibration region' "$W/nocal.stderr" || fail "no calibration region: not refused"
echo "ok  no calibration region: refused"
