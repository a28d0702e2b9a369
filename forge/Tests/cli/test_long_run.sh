#!/bin/bash
# A long run (the exact DFT on ISMRMRD's default 256x256, 8-coil Cartesian Shepp-Logan: about half an
# hour on 2 cores) says so before it starts, naming the faster operator, and its stdout is line-buffered:
# with stdout in a file, the summary lines are there while the solve runs, and survive killing it.
#   usage: test_long_run.sh FORGE_RECON WORKDIR        (exit 77 = skipped without ismrmrd-tools)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
workdir "$W"
cd "$W" || fail "cd"
"$GEN" -o "$W/sl256.h5" >/dev/null || fail "generator failed"
"$RECON" "$W/sl256.h5" --operator dft -o "$W/slow" --device cpu >"$W/slow.stdout" 2>"$W/slow.stderr" &
pid=$!
for _ in $(seq 1 600); do  # up to 60 s for reading the file and printing the notice
    grep -q 'will take about' "$W/slow.stderr" && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
sleep 0.5
running=0; kill -0 $pid 2>/dev/null && running=1
kill $pid 2>/dev/null; wait $pid 2>/dev/null
[ $running -eq 1 ] || { cat "$W/slow.stderr" >&2; fail "the dft run ended before it could be observed"; }
grep -q 'warning: --operator dft will take about [0-9]* s' "$W/slow.stderr" || { cat "$W/slow.stderr" >&2; fail "no long-run estimate"; }
grep -q -- '--operator fft takes about' "$W/slow.stderr" || fail "the notice does not name the faster fft operator"
grep -q 'forge-recon: operator dft + SENSE' "$W/slow.stdout" \
    || { echo "stdout file:"; cat "$W/slow.stdout"; fail "stdout was not written during the solve (block-buffered?)"; }
grep -q '256x256x1' "$W/slow.stdout" || fail "the data summary line is missing from stdout"
[ -e "$W/slow.nii" ] && fail "a killed run left an output"
echo "ok  long dft run: $(grep -o 'will take about [0-9]* s' "$W/slow.stderr"); summary on stdout during the solve"
