#!/usr/bin/env bash
# Coil-map estimation against BART (the peer a user would pick): BART's ESPIRiT (`ecalib -m1`, one set of maps,
# a calibration region of 24 lines) and its direct calibration (`caldir 24`) on the same k-space as forge's
# estimate_coil_maps in bench_maps (the first echo of forge-recon --demo's field-map scan), one BART call per
# slice, beside forge's coil-map stages (bench_maps rows a + b, on the host).
#
# Usage: benchmarks/bench_maps_bart.sh BENCH_MAPS [N slices coils]    (default 128 16 8; bart on PATH)
#        OMP_NUM_THREADS applies to both.
set -euo pipefail
bench=${1:?usage: bench_maps_bart.sh BENCH_MAPS [N slices coils]}
N=${2:-128}
S=${3:-16}
C=${4:-8}
command -v bart > /dev/null || {
    echo "bench_maps_bart: bart is not on PATH" >&2
    exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" --write-cfl "$work/ksp" "$N" "$S" "$C"

# "wall s | CPU-s" of one BART command over every slice (CPU: user + system, all threads).
time_all() {
    local TIMEFORMAT='%R %U %S' t
    t=$({ time (for ((s = 0; s < S; ++s)); do "$@" "$work/ksp_$s" "$work/out_$s" > /dev/null; done); } 2>&1)
    awk '{ printf "%.3f | %.3f", $1, $2 + $3 }' <<< "$t"
}

echo "bench_maps_bart: BART $(bart version), ${N}x${N} x $S slices x $C coils," \
    "OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, load $(cut -d' ' -f1 /proc/loadavg)"
echo "| method | wall s (all slices) | CPU-s |"
echo "|---|---|---|"
echo "| BART ecalib -m1 -r 24 | $(time_all bart ecalib -m1 -r 24) |"
echo "| BART caldir 24 | $(time_all bart caldir 24) |"
echo "forge (bench_maps --host-only; columns: host s, host CPU-s):"
"$bench" --host-only "$N" "$S" "$C" | grep -E '^\| (a|b)\.'
