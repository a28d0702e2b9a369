#!/bin/bash
# forge-recon's operator choice. ISMRMRD's Shepp-Logan (Cartesian, 2x readout oversampling) runs on the
# FFT by default (GfftSampled on the encoded grid) and gives the exact DFT's image; so do its accelerated
# interleaves with stored trajectories; with a field map the FFT runs inside time segmentation and stays
# close to the field-corrected DFT. On spiral data (the demo's file) auto takes the operator its cost model
# (FORGE_COST_MODEL=fixed here: the same rates on every machine) estimates fastest, one of those that reproduce the
# model (dft, toeplitz, and nufft without a field map to correct, timeseg with one), and names the estimates it
# weighed; --operator fft refuses spiral data. What ran (operator, why auto chose it, L, NRMSE) is read from each run's
# --report; the refusal is the one line it prints.
#   usage: test_operators.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
run() {  # name, forge-recon arguments; the run's report is $W/name.json
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" --device cpu --report "$W/$name.json" >"$W/$name.stdout" 2>"$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: forge-recon failed"; }
}
rep() { report_get "$W/$1.json" "$2"; }     # run name, key path
nrmses() { rep "$1" 'reconstructions.0.quality.*.nrmse'; }
# operator name, what auto said and the L of every solve of run $1
ran() { echo "$(rep "$1" operator.name) ($(rep "$1" operator.requested): $(rep "$1" operator.auto_reason)) L=$(rep "$1" 'reconstructions.0.solves.*.segments' | sort -u | tr '\n' ' ')"; }
# a and b agree to 1e-4 relative (the same model, float rounding apart)
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * b + 1e-6) }'; }

"$GEN" -m 64 -c 4 -n 0.01 -o "$W/sl.h5" >/dev/null || fail "generator failed"
run auto "$W/sl.h5"
[ "$(ran auto)" = "fft (auto: the samples lie on the 128x64x1 FFT grid) L=null " ] \
    || { ran auto; fail "auto did not choose fft on the 2x oversampled encoded grid"; }
run dft "$W/sl.h5" --operator dft
a=$(nrmses auto); d=$(nrmses dft)
[ -n "$a" ] && [ -n "$d" ] || fail "no NRMSE printed"
same "$a" "$d" || fail "fft NRMSE $a differs from the exact DFT's $d"
le "$a" 0.08 || fail "fft NRMSE $a above 0.08"
echo "ok  Cartesian 64x64, 4 coils: auto = fft NRMSE $a, dft NRMSE $d"

"$GEN" -m 64 -c 4 -n 0.01 -a 2 -k -o "$W/slk.h5" >/dev/null || fail "generator -a 2 -k failed"
run autok "$W/slk.h5"
[ "$(rep autok operator.name) $(rep autok operator.requested)" = "fft auto" ] \
    || fail "auto did not choose fft for stored Cartesian trajectories: $(ran autok)"
[ "$(rep autok data.k_from)" = acquisitions ] || fail "the stored trajectories were not used"
run dftk "$W/slk.h5" --operator dft
paste <(nrmses autok) <(nrmses dftk) >"$W/k.pairs"
[ "$(wc -l <"$W/k.pairs")" -eq 2 ] || fail "expected 2 frames"
while read -r f g; do same "$f" "$g" || fail "accelerated frame: fft NRMSE $f differs from dft $g"; done <"$W/k.pairs"
echo "ok  accelerated R=2 with stored trajectories: fft == dft per frame ($(tr '\n\t' '  ' <"$W/k.pairs"))"

# a field map (the demo's, 32x32, rad/s) on 32x32 Cartesian data: time segmentation around the FFT
"$RECON" --demo --demo-size 32 --demo-slices 1 -n 2 -q -o "$W/demo" --device cpu >/dev/null 2>"$W/demo.stderr" \
    || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
"$GEN" -m 32 -c 4 -n 0.01 -o "$W/sl32.h5" >/dev/null || fail "generator -m 32 failed"
run fmfft "$W/sl32.h5" --fieldmap "$W/demo.h5:/dataset/fieldmap"
[ "$(rep fmfft operator.name) $(rep fmfft operator.requested)" = "fft auto" ] \
    || fail "auto did not choose fft with a field map: $(ran fmfft)"
rep fmfft 'reconstructions.0.solves.*.segments' | grep -qx '[0-9][0-9]*' || fail "no time segmentation around the FFT: $(ran fmfft)"
run fmdft "$W/sl32.h5" --fieldmap "$W/demo.h5:/dataset/fieldmap" --operator dft
f=$(nrmses fmfft); g=$(nrmses fmdft)
awk -v a="$f" -v b="$g" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.02 * b) }' \
    || fail "field-corrected fft NRMSE $f is not within 2% of the DFT's $g"
echo "ok  Cartesian with a field map: fft + time segmentation NRMSE $f, dft $g"

# auto's choice on non-Cartesian data: $1 a run, $2 the operators it may take, $3 the nufft-like operator the reason
# must price (nufft without a field map to correct, timeseg with one); the reason names every estimate
estimate='[0-9][0-9.e+-]* s'
auto_ok() {
    local name=$1 allowed=$2 nu=$3 op
    op=$(rep "$name" operator.name)
    [ "$(rep "$name" operator.requested)" = auto ] || fail "$name: not an auto run: $(ran "$name")"
    echo " $allowed " | grep -q " $op " || fail "$name: auto took $op, not one of: $allowed ($(ran "$name"))"
    rep "$name" operator.auto_reason |
        grep -q "^non-Cartesian; estimated for [0-9]* of at most [0-9]* iterations ([a-z]* rates): dft $estimate, $nu $estimate, toeplitz $estimate (kernels included); $op " \
        || fail "$name: the reason does not name the estimates and the choice: $(ran "$name")"
}

# spiral with a field map to correct: dft, timeseg or toeplitz, never the plain nufft; fft refused
run spiral "$W/demo.h5"
auto_ok spiral "dft timeseg toeplitz" timeseg
run spiral_dft "$W/demo.h5" --operator dft
"$RECON" "$W/demo.h5" --operator fft -o "$W/spiral_fft" --device cpu >"$W/sf.stdout" 2>"$W/sf.stderr"
rc=$?
[ $rc -eq 2 ] || fail "--operator fft on spiral data: exit $rc, expected 2"
grep -q 'not on the k-space grid of an FFT' "$W/sf.stderr" || { cat "$W/sf.stderr"; fail "no clear error for fft on spiral data"; }
[ -e "$W/spiral_fft.nii" ] && fail "--operator fft on spiral data left an output"
[ -e "$W/spiral_fft.json" ] && fail "--operator fft on spiral data left a report"
echo "ok  spiral: auto = $(rep spiral operator.name) (of dft timeseg toeplitz), --operator fft refused"

# spiral with --operator toeplitz: the exact DFT's image (normal operator error 1e-3 by default), L chosen,
# printed in the progress lines and reported; -L forces it
run spiral_toep "$W/demo.h5" --operator toeplitz
L=$(rep spiral_toep 'reconstructions.0.solves.0.segments')
echo "$L" | grep -qx '[0-9][0-9]*' || fail "toeplitz did not report its L: $(ran spiral_toep)"
grep -q "recon (L=$L): iteration 1/" "$W/spiral_toep.stderr" || { cat "$W/spiral_toep.stderr"; fail "toeplitz did not print its L"; }
s=$(nrmses spiral_dft); t=$(nrmses spiral_toep)
[ -n "$s" ] && [ -n "$t" ] || fail "no NRMSE printed for the spiral runs"
paste <(nrmses spiral_dft) <(nrmses spiral_toep) >"$W/toep.pairs"
while read -r f g; do
    awk -v a="$f" -v b="$g" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.01 * a) }' \
        || fail "toeplitz NRMSE $g is not within 1% of the DFT's $f"
done <"$W/toep.pairs"
# the kernel build reports its steps (from step 0 to the last, total/total) before the first iteration
first() { grep -n "$1" "$W/spiral_toep.stderr" | head -1 | cut -d: -f1; }
b=$(first 'recon (L=[0-9]*): Toeplitz kernels: step 0/[0-9]*, ')
e=$(first 'recon (L=[0-9]*): Toeplitz kernels: step \([0-9]*\)/\1, ')
i=$(first 'recon (L=[0-9]*): iteration 1/')
[ -n "$b" ] && [ -n "$e" ] && [ -n "$i" ] && [ "$b" -lt "$e" ] && [ "$e" -lt "$i" ] \
    || { cat "$W/spiral_toep.stderr"; fail "toeplitz: no kernel build steps (first, last) before the first iteration"; }
run spiral_toep3 "$W/demo.h5" --operator toeplitz -L 3
[ "$(rep spiral_toep3 segments)" = "[3]" ] || fail "-L 3 not used by toeplitz: $(ran spiral_toep3)"
echo "ok  spiral: toeplitz NRMSE $(tr '\n\t' '  ' <"$W/toep.pairs")(dft, toeplitz), -L forces L, kernel build steps before the first iteration"

# one cost for every operator: toeplitz prints ||y - A x||^2 + R(x) as the DFT does: positive, and equal to it up to
# its normal operator's error (--toeplitz-error 1e-3 of x^H G^H G x, near ||y||^2: allowed 2e-3 of the first cost)
costs() { sed -n 's/.*: iteration [0-9]*\/[0-9]* cost \([0-9.eE+-]*\) .*/\1/p' "$W/$1.stderr"; }
paste <(costs spiral_dft) <(costs spiral_toep) >"$W/cost.pairs"
[ "$(wc -l <"$W/cost.pairs")" -ge 5 ] || { cat "$W/spiral_toep.stderr" >&2; fail "no cost lines"; }
c1=$(head -n 1 "$W/cost.pairs" | cut -f 1)
while read -r d t; do
    awk -v a="$d" -v b="$t" -v f="$c1" 'BEGIN { e = a - b; if (e < 0) e = -e; exit !(b > 0 && e <= 2e-3 * f) }' \
        || fail "toeplitz cost $t differs from the dft's $d (or is not positive)"
done <"$W/cost.pairs"
echo "ok  spiral: toeplitz prints the dft's cost ($(head -n 1 "$W/cost.pairs" | tr '\t' ' ') ... $(tail -n 1 "$W/cost.pairs" | tr '\t' ' '))"

# without a field map to correct auto never names timeseg (it would run the plain NUFFT): with --fieldmap none or
# --no-field-correction its choice is dft, nufft or toeplitz and says why; with the field map it is never the plain
# nufft. A 128x128 single-coil spiral, -n 30 (priced at the iterations the tolerance is expected to leave).
"$RECON" --demo --demo-size 128 --demo-slices 1 --demo-coils 1 -n 2 -q -o "$W/demo128" --device cpu >/dev/null \
    2>"$W/demo128.stderr" || { cat "$W/demo128.stderr" >&2; fail "the 128x128 demo failed"; }
run nufft_auto "$W/demo128.h5" --fieldmap none -n 30 --tolerance 0.1
auto_ok nufft_auto "dft nufft toeplitz" nufft
rep nufft_auto operator.auto_reason | grep -q ', no field map$' || fail "auto did not say there is no field map: $(ran nufft_auto)"
run nufft_nocorr "$W/demo128.h5" --no-field-correction -n 30 --tolerance 0.1
auto_ok nufft_nocorr "dft nufft toeplitz" nufft
rep nufft_nocorr operator.auto_reason | grep -q ', no field correction$' \
    || fail "auto with --no-field-correction did not say so: $(ran nufft_nocorr)"
run timeseg_auto "$W/demo128.h5" -n 30 --tolerance 0.1
auto_ok timeseg_auto "dft timeseg toeplitz" timeseg
# without a tolerance every one of -n 1000 iterations is priced: the kernels pay for themselves, auto takes toeplitz
run toeplitz_auto "$W/demo.h5" --fieldmap none -n 1000 --tolerance 0
auto_ok toeplitz_auto "toeplitz" nufft
rep toeplitz_auto operator.auto_reason | grep -q 'estimated for 1000 of at most 1000 iterations' \
    || fail "auto without a tolerance did not price every iteration: $(ran toeplitz_auto)"
# with a tolerance -n prices at most kExpectedIterations (30)
run expected_auto "$W/demo.h5" --fieldmap none -n 1000 --tolerance 0.1 --operator auto
rep expected_auto operator.auto_reason | grep -q 'estimated for 30 of at most 1000 iterations' \
    || fail "auto with a tolerance did not price the expected iterations: $(ran expected_auto)"
run timeseg_none "$W/demo.h5" --operator timeseg --fieldmap none -n 2
[ "$(rep timeseg_none operator.description)" = "timeseg (no field map to correct: plain nufft)" ] \
    || fail "--operator timeseg without a field map did not say it runs nufft: $(rep timeseg_none operator.description)"
grep -q 'operator timeseg (no field map to correct: plain nufft)' "$W/timeseg_none.stdout" \
    || { cat "$W/timeseg_none.stdout"; fail "--operator timeseg without a field map did not print that it runs nufft"; }
echo "ok  auto: $(rep nufft_auto operator.name) without a field map, $(rep nufft_nocorr operator.name) without field correction, $(rep timeseg_auto operator.name) with one, toeplitz where its kernels pay"
