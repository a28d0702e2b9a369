#!/bin/bash
# ISMRMRD's own ismrmrd_generate_cartesian_shepp_logan output reconstructs with forge-recon and matches
# the phantom stored in the same file: fully sampled Cartesian with its csm maps, and 2x accelerated with
# k-space coordinates stored (-k: trajectory taken from the acquisitions, SENSE with the csm maps). The facts
# come from --report.
#   usage: test_shepp_logan.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
"$GEN" -m 64 -c 4 -n 0.01 -o "$W/sl.h5" >/dev/null || fail "generator failed"
"$RECON" "$W/sl.h5" -o "$W/sl_recon" --device cpu --report "$W/sl.json" >"$W/sl.stdout" 2>"$W/sl.stderr" \
    || { cat "$W/sl.stderr" >&2; fail "recon failed"; }
cat "$W/sl.stdout"
[ "$(report_get "$W/sl.json" data.k_from)" = "encoding counters" ] || fail "Cartesian encoding not used"
e=$(report_get "$W/sl.json" reconstructions.0.quality.0.nrmse)
[ -n "$e" ] && le "$e" 0.08 || fail "Shepp-Logan NRMSE '$e' above 0.08"
[ -s "$W/sl_recon.nii" ] && [ -s "$W/sl_recon.png" ] || fail "outputs missing"
echo "ok  fully sampled: NRMSE $e"

"$GEN" -m 64 -c 4 -n 0.01 -a 2 -k -o "$W/slk.h5" >/dev/null || fail "generator -a 2 -k failed"
"$RECON" "$W/slk.h5" -o "$W/slk_recon" --device cpu --report "$W/slk.json" >"$W/slk.stdout" 2>"$W/slk.stderr" \
    || { cat "$W/slk.stderr" >&2; fail "recon -k failed"; }
cat "$W/slk.stdout"
[ "$(report_get "$W/slk.json" data.k_from)" = acquisitions ] || fail "stored trajectory not used"
[ "$(report_get "$W/slk.json" operator.sense)" = true ] || fail "not a SENSE reconstruction"
[ "$(report_get "$W/slk.json" 'reconstructions.0.solves.*.coil' | sort -u)" = null ] || fail "fell back to coil by coil"
grep -q 'sum-of-squares' "$W/slk.stderr" && fail "fell back to root-sum-of-squares"
n=0
while read -r v; do
    le "$v" 0.12 || fail "accelerated frame NRMSE $v above 0.12"
    n=$((n + 1))
done < <(report_get "$W/slk.json" 'reconstructions.0.quality.*.nrmse')
[ $n -eq 2 ] || fail "expected 2 frames (the 2 interleaved repetitions), got $n"
echo "ok  accelerated (R=2, -k): $n frames"
