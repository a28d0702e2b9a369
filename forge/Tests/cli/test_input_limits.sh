#!/bin/bash
# Inputs whose sizes or values lie are refused before anything is allocated: exit code 2, one line on
# stderr naming the field, within seconds, under a 400 MB address-space limit (so an attempted
# allocation of gigabytes would end differently: std::bad_alloc, exit 1). A real reconstruction runs
# under the same limit, so the limit itself is not what refuses the bad inputs.
#   usage: test_input_limits.sh FORGE_RECON FIXTURES_PROGRAM WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; FIXTURES=$2; W=$3
workdir "$W"
# Where an NVIDIA driver is loaded, a CUDA build's first CUDA call (even with --device cpu, to see whether a GPU
# is there) makes the driver reserve address space far beyond any such limit: measured on an H100 machine, good.h5
# then cannot run at all. The limits are about forge's own allocations, which machines without a driver (CI) test.
if [ -e /dev/nvidiactl ] && ldd "$RECON" 2>/dev/null | grep -qE "libcudart|libcufft"; then
    echo "SKIP: an NVIDIA driver is loaded and forge-recon is a CUDA build (its address-space reservations exceed ulimit -v)"
    exit 77
fi
"$FIXTURES" "$W" || fail "fixture program failed"
# 400 MB above what the program's shared libraries map (cuFFT alone maps ~280 MB in CUDA builds), with
# one BLAS and two OpenMP threads (every thread's stack and buffers take address space too: OpenBLAS
# hangs at exit when it cannot get them).
LIB_KB=$(ldd "$RECON" 2>/dev/null | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
LIMIT_KB=$((${LIB_KB:-0} + 400000))

limited() {  # runs forge-recon under the address-space and time limits
    ( ulimit -v $LIMIT_KB && export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 && exec timeout 30 "$RECON" "$@" )
}

check_refused() {  # name, expected stderr substrings (separated by |), args...
    local name=$1 expect=$2; shift 2
    local t0=$SECONDS
    limited "$@" -o "$W/out_$name" >"$W/$name.stdout" 2>"$W/$name.stderr"
    local rc=$?
    [ $rc -ne 124 ] || fail "$name: still running after 30 s"
    [ $rc -eq 2 ] || { cat "$W/$name.stderr" >&2; fail "$name: exit code $rc, expected 2"; }
    local lines; lines=$(wc -l <"$W/$name.stderr")
    [ "$lines" -eq 1 ] || { cat "$W/$name.stderr" >&2; fail "$name: $lines lines on stderr, expected 1"; }
    grep -q '^forge-recon: error: ' "$W/$name.stderr" || fail "$name: stderr does not start with 'forge-recon: error:'"
    local IFS='|' e
    for e in $expect; do
        grep -qF -- "$e" "$W/$name.stderr" || { cat "$W/$name.stderr" >&2; fail "$name: stderr does not mention '$e'"; }
    done
    if ls "$W" | grep -q "^out_$name"; then ls "$W" >&2; fail "$name: left an output file"; fi
    echo "ok  $name (exit $rc, $((SECONDS - t0)) s): $(cat "$W/$name.stderr")"
}

# the limit leaves room for a real (small) reconstruction
limited "$W/good.h5" -n 2 -q --device cpu -o "$W/good_recon" >"$W/good.stdout" 2>"$W/good.stderr" \
    || { cat "$W/good.stderr" >&2; fail "good.h5 does not reconstruct under ulimit -v $LIMIT_KB"; }
echo "ok  good.h5 reconstructs under ulimit -v $LIMIT_KB"

check_refused matrix_negative  "reconSpace/matrixSize/x|-16"        "$W/matrix_negative.h5"
check_refused matrix_100000    "reconSpace/matrixSize/x|100000"     "$W/matrix_100000.h5"
check_refused matrix_65534     "reconSpace/matrixSize|65534x65534"  "$W/matrix_65534.h5"
check_refused matrix_sparse    "reconSpace/matrixSize|8192x8192"    "$W/matrix_sparse.h5"
check_refused memory           "GiB|11584x11584"                    "$W/memory.h5"
check_refused nan_data         "acquisition 0|NaN"                  "$W/nan_data.h5"
check_refused fieldmap_nan     "fieldmap_nan.nii|NaN"               "$W/good.h5" --fieldmap "$W/fieldmap_nan.nii"
check_refused fieldmap_claims  "fieldmap_claims_16384.nii|16384x16384" "$W/good.h5" --fieldmap "$W/fieldmap_claims_16384.nii"
check_refused fieldmap_overflow "fieldmap_overflow.nii|16384x16384x16384x16384x16384" \
    "$W/good.h5" --fieldmap "$W/fieldmap_overflow.nii"
check_refused fieldmap_huge_h5 "field map|16384x16384"              "$W/good.h5" --fieldmap "$W/fieldmap_huge.h5:/fm"
# coil-map estimation counts: 1024 coils on 32x32 take 4 GiB of coil-pair covariances
check_refused coils_1024       "needs about|GiB|1024 coil(s) with coil maps estimated from the data" "$W/coils_1024.h5"
