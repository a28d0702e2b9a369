#!/bin/bash
# forge-recon field-corrects BART arrays when it is given their sample times: the demo's spiral (one slice, with a
# field map) exported as BART arrays (forge_mrd_cfl bart) reconstructs with --fieldmap and --dwell/--echo-time, or
# --bart-times, far closer to the phantom than without field correction, and the two ways of giving the times give
# the same image. A field map on BART input without times, and times that are negative, NaN, not numbers or of the
# wrong size, are refused with exit 2 and one error line naming the option. A field map file that is 0 on some
# pixels is extended there (--fieldmap-extend on, the default) and used as given with --fieldmap-extend off.
#   usage: test_bart_times.sh FORGE_RECON FORGE_MRD_CFL WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 32 --demo-slices 1 --demo-coils 4 -n 2 -q -o "$W/demo" --device cpu >demo.log 2>&1 \
    || { cat demo.log >&2; fail "the demo failed"; }
"$CFL" bart demo.h5 d >bart.txt || fail "forge_mrd_cfl bart failed"
read -r _ dwell _ te <bart.txt
[ -n "$dwell" ] && [ -n "$te" ] || fail "no dwell and TE from forge_mrd_cfl bart: $(cat bart.txt)"

run() {  # name, forge-recon arguments
    local name=$1; shift
    "$RECON" --bart-kspace d_k --bart-traj d_t --bart-maps d_s --reference demo_truth.nii "$@" -o "$W/$name" -n 20 \
        --device cpu >"$name.stdout" 2>"$name.stderr" || { cat "$name.stderr" >&2; fail "$name: forge-recon failed"; }
}
run plain --fieldmap none
run dwell --fieldmap demo_fieldmap.nii --dwell "$dwell" --echo-time "$te"
run times --fieldmap demo_fieldmap.nii --bart-times d_times
plain=$(number_after "NRMSE vs reference" plain.stdout)
corrected=$(number_after "NRMSE vs reference" dwell.stdout)
timed=$(number_after "NRMSE vs reference" times.stdout)
[ -n "$plain" ] && [ -n "$corrected" ] && [ -n "$timed" ] || { cat dwell.stdout >&2; fail "no NRMSE printed"; }
le "$corrected" "$(awk -v p="$plain" 'BEGIN { print 0.5 * p }')" \
    || fail "field-corrected NRMSE $corrected is not below half the uncorrected $plain"
diff=$("$CFL" compare dwell.nii times.nii | sed -n 's/relative difference \([0-9.eE+-]*\).*/\1/p')
le "$diff" 1e-5 || fail "--dwell/--echo-time and --bart-times give images $diff apart"
echo "ok  BART arrays with --fieldmap: NRMSE $corrected (--dwell $dwell --echo-time $te), $timed (--bart-times;" \
     "images $diff apart), uncorrected $plain"

refuse() {  # name, expected text of the error, forge-recon arguments
    local name=$1 expected=$2; shift 2
    "$RECON" --bart-kspace d_k --bart-traj d_t --bart-maps d_s "$@" -o "$W/refused_$name" -n 2 --device cpu \
        >"$name.stdout" 2>"$name.stderr"
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c 'forge-recon: error:' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    grep -qF -- "$expected" "$name.stderr" || { cat "$name.stderr" >&2; fail "$name: the error does not say '$expected'"; }
    ls "$W"/refused_* >/dev/null 2>&1 && fail "$name: the refused run left an output"
    echo "ok  refused $name: $(sed -n 's/forge-recon: error: //p' "$name.stderr" | cut -c1-160)"
}
refuse no_times "or --bart-times FILE" --fieldmap demo_fieldmap.nii
refuse negative_dwell "--dwell -1e-05: expected a finite number of seconds > 0" --fieldmap demo_fieldmap.nii --dwell -1e-05
refuse zero_dwell "--dwell 0: expected a finite number of seconds > 0" --fieldmap demo_fieldmap.nii --dwell 0
refuse nan_dwell "--dwell nan: expected a finite number" --fieldmap demo_fieldmap.nii --dwell nan
refuse word_dwell "--dwell '10us' is not a number of seconds" --fieldmap demo_fieldmap.nii --dwell 10us
refuse negative_te "--echo-time -0.001: expected a finite number of seconds >= 0" --fieldmap demo_fieldmap.nii \
    --dwell "$dwell" --echo-time -0.001
refuse times_size "--bart-times 'd_k.cfl' has dims" --fieldmap demo_fieldmap.nii --bart-times d_k
cp d_times.hdr neg.hdr && cp d_times.cfl neg.cfl && printf '\x00\x00\x80\xbf' | dd of=neg.cfl bs=1 seek=24 conv=notrunc 2>/dev/null
refuse negative_time "the time of sample 3 of readout 0 is (-1, 0i)" --fieldmap demo_fieldmap.nii --bart-times neg
cp d_times.hdr nan.hdr && cp d_times.cfl nan.cfl && printf '\x00\x00\xc0\x7f' | dd of=nan.cfl bs=1 seek=0 conv=notrunc 2>/dev/null
refuse nan_time "the time of sample 0 of readout 0 is (nan" --fieldmap demo_fieldmap.nii --bart-times nan

# a field map that is 0 on its first row (as tools write outside the object) is extended there, or kept with off
cp demo_fieldmap.nii zero_row.nii && dd if=/dev/zero of=zero_row.nii bs=1 seek=352 count=128 conv=notrunc 2>/dev/null
run extended --fieldmap zero_row.nii --dwell "$dwell" --echo-time "$te"
grep -q "extended smoothly to the 32 pixels where it is 0" extended.stdout extended.stderr \
    || { cat extended.stdout extended.stderr >&2; fail "the zero row of the field map was not extended"; }
run kept --fieldmap zero_row.nii --dwell "$dwell" --echo-time "$te" --fieldmap-extend off
grep -q "extended smoothly" kept.stdout kept.stderr && fail "--fieldmap-extend off extended the field map"
echo "ok  a field map with a zero row: extended (NRMSE $(number_after "NRMSE vs reference" extended.stdout)), kept as" \
     "given with --fieldmap-extend off (NRMSE $(number_after "NRMSE vs reference" kept.stdout))"
