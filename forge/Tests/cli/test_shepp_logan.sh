#!/bin/bash
# ISMRMRD's own ismrmrd_generate_cartesian_shepp_logan output reconstructs with forge-recon and matches
# the phantom stored in the same file: fully sampled Cartesian with its csm maps, and 2x accelerated with
# k-space coordinates stored (-k: trajectory taken from the acquisitions, SENSE with the csm maps).
#   usage: test_shepp_logan.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
"$GEN" -m 64 -c 4 -n 0.01 -o "$W/sl.h5" >/dev/null || fail "generator failed"
"$RECON" "$W/sl.h5" -o "$W/sl_recon" --device cpu >"$W/sl.stdout" 2>"$W/sl.stderr" || { cat "$W/sl.stderr" >&2; fail "recon failed"; }
cat "$W/sl.stdout"
grep -q 'from the encoding counters' "$W/sl.stdout" || fail "Cartesian encoding not used"
e=$(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/sl.stdout" | head -n 1)
[ -n "$e" ] && le "$e" 0.08 || fail "Shepp-Logan NRMSE '$e' above 0.08"
[ -s "$W/sl_recon.nii" ] && [ -s "$W/sl_recon.png" ] || fail "outputs missing"
echo "ok  fully sampled: NRMSE $e"

"$GEN" -m 64 -c 4 -n 0.01 -a 2 -k -o "$W/slk.h5" >/dev/null || fail "generator -a 2 -k failed"
"$RECON" "$W/slk.h5" -o "$W/slk_recon" --device cpu >"$W/slk.stdout" 2>"$W/slk.stderr" || { cat "$W/slk.stderr" >&2; fail "recon -k failed"; }
cat "$W/slk.stdout"
grep -q 'from the acquisitions' "$W/slk.stdout" || fail "stored trajectory not used"
grep -q 'SENSE' "$W/slk.stdout" || fail "not a SENSE reconstruction"
grep -q 'sum-of-squares' "$W/slk.stderr" && fail "fell back to root-sum-of-squares"
n=0
while read -r v; do
    le "$v" 0.12 || fail "accelerated frame NRMSE $v above 0.12"
    n=$((n + 1))
done < <(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/slk.stdout")
[ $n -eq 2 ] || fail "expected 2 frames (the 2 interleaved repetitions), got $n"
echo "ok  accelerated (R=2, -k): $n frames"
