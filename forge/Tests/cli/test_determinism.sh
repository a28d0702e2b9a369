#!/bin/bash
# forge-recon's images do not depend on the number of OpenMP threads or MPI ranks: the NIfTI files of
# OMP_NUM_THREADS=1, 2 and 16 and, with MPI, of 1, 2 and 3 ranks are equal byte for byte, on the demo's file
# (spiral with a field map: toeplitz, dft, nufft, timeseg, auto) and on BART radial arrays (several frames of one
# trajectory: auto, toeplitz, nufft).
#   usage: test_determinism.sh FORGE_RECON WORKDIR [MPIEXEC]     (the radial part is skipped without bart)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2; MPIEXEC=${3:-}
workdir "$W"
cd "$W" || fail "cannot enter $W"
COMMON=(--device cpu -n 5 --tolerance 0 -q)
same() {  # same FILE_A FILE_B WHAT
    [ -s "$1" ] || fail "$3: $1 was not written"
    cmp -s "$1" "$2" || fail "$3: $1 and $2 differ"
}
threads() {  # threads NAME ARGS...: runs with 1, 2 and 16 threads, compares
    local name=$1; shift
    for t in 1 2 16; do
        OMP_NUM_THREADS=$t "$RECON" "$@" "${COMMON[@]}" -o "$name.t$t" >"$name.t$t.log" 2>&1 \
            || { cat "$name.t$t.log" >&2; fail "$name with $t threads failed"; }
    done
    same "$name.t1.nii" "$name.t2.nii" "$name, 1 and 2 threads"
    same "$name.t1.nii" "$name.t16.nii" "$name, 1 and 16 threads"
}
MPI=()
if [ -n "$MPIEXEC" ] && command -v "$MPIEXEC" >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
    MPI=(timeout 120 "$MPIEXEC")
    "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE" && MPI+=(--oversubscribe --bind-to none)
fi
ranks() {  # ranks NAME ARGS...: 2 ranks of 2 threads and 3 ranks of 1 against threads' one-process image
    local name=$1; shift
    [ ${#MPI[@]} -gt 0 ] || return 0
    OMP_NUM_THREADS=2 "${MPI[@]}" -n 2 "$RECON" "$@" "${COMMON[@]}" -o "$name.r2" >"$name.r2.log" 2>&1 \
        || { cat "$name.r2.log" >&2; fail "$name with 2 ranks failed"; }
    OMP_NUM_THREADS=1 "${MPI[@]}" -n 3 "$RECON" "$@" "${COMMON[@]}" -o "$name.r3" >"$name.r3.log" 2>&1 \
        || { cat "$name.r3.log" >&2; fail "$name with 3 ranks failed"; }
    same "$name.t1.nii" "$name.r2.nii" "$name, 1 and 2 ranks"
    same "$name.t1.nii" "$name.r3.nii" "$name, 1 and 3 ranks"
}

# The demo's file: 32 x 32, 2 slices, 4 coils, spiral with a field map.
"$RECON" --demo --demo-size 32 --demo-coils 4 -n 2 --fieldmap-iterations 20 --device cpu -o demo -q >demo.log 2>&1 \
    || { cat demo.log >&2; fail "the demo could not make its file"; }
for op in toeplitz dft nufft timeseg auto; do
    threads "demo_$op" demo.h5 --operator $op
done
ranks demo_toeplitz demo.h5 --operator toeplitz
ranks demo_auto demo.h5 --operator auto
echo "ok  demo file: toeplitz, dft, nufft, timeseg, auto: the same bytes on 1, 2, 16 threads${MPI:+ and 1, 2, 3 ranks}"

# BART radial arrays: 3 frames (time, dimension 10) of one 33-spoke trajectory, 4 coils, given maps.
if ! command -v bart >/dev/null 2>&1; then
    echo "SKIP: radial part: bart not installed (Debian: apt-get install bart)"
    exit 0
fi
{ bart traj -r -x 64 -y 33 t && bart scale 0.5 t t2 && bart phantom -s 4 -k -t t2 k1 && bart scale 0.5 k1 k2 &&
  bart scale 2 k1 k3 && bart join 10 k1 k2 k3 k && bart phantom -x 32 -S 4 s; } >bart.log 2>&1 \
    || { cat bart.log >&2; fail "bart could not make the radial data"; }
RADIAL=(--bart-kspace k --bart-traj t2 --bart-maps s)
for op in toeplitz nufft auto; do
    threads "radial_$op" "${RADIAL[@]}" --operator $op
done
ranks radial_toeplitz "${RADIAL[@]}" --operator toeplitz
ranks radial_nufft "${RADIAL[@]}" --operator nufft
echo "ok  radial arrays: toeplitz, nufft, auto: the same bytes on 1, 2, 16 threads${MPI:+ and 1, 2, 3 ranks}"
