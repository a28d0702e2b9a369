#!/usr/bin/env bash
# Compressed sensing on BART-simulated radial data: forge's FISTA / POGM / ADMM with wavelet L1 and exact TV
# (bench_cs) beside BART's pics (-l1 wavelets, -R T total variation) and, when it imports, SigPy's L1WaveletRecon;
# each method's best NRMSE over a lambda sweep, and its time. docs/benchmarks.md, "Compressed sensing", holds a run.
#
#   benchmarks/bench_cs.sh BUILD_DIR [WORK_DIR] [SPOKES...]      (default spokes: 40 64; bart on PATH)
#
# Environment: ITER (default 50), LAMBDAS (forge's, relative to max |E^H y|; default 0.001,0.002,0.005,0.01),
# BART_LAMBDAS (BART's -r; default 0.001 0.005 0.01 0.02), SIGPY_LAMBDAS (relative as forge's; default
# 0.002 0.005 0.01), PYTHON (with sigpy; default python3), DEVICE (cpu or gpu, forge's rows; default cpu), METHODS
# (forge's solvers; default fista,pogm,admm), FORGE_ARGS (more bench_cs solve options, e.g. --wavelet db4).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_cs.sh BUILD_DIR [WORK_DIR] [SPOKES...]}" && pwd)
W=${2:-$(mktemp -d)}
shift $(( $# >= 2 ? 2 : 1 ))
SPOKES=("$@")
[ ${#SPOKES[@]} -eq 0 ] && SPOKES=(40 64)
ITER=${ITER:-50}
LAMBDAS=${LAMBDAS:-0.001,0.002,0.005,0.01}
BART_LAMBDAS=${BART_LAMBDAS:-0.001 0.005 0.01 0.02}
SIGPY_LAMBDAS=${SIGPY_LAMBDAS:-0.002 0.005 0.01}
PYTHON=${PYTHON:-python3}
DEVICE=${DEVICE:-cpu}
METHODS=${METHODS:-fista,pogm,admm}
FORGE_ARGS=${FORGE_ARGS:-}
BENCH=$BUILD/benchmarks/bench_cs
[ -x "$BENCH" ] || { echo "missing $BENCH: cmake --build $BUILD --target bench_cs" >&2; exit 2; }
command -v bart >/dev/null || { echo "bart is not on PATH (apt-get install bart)" >&2; exit 2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench_cs_peers.sh
source "$HERE/bench_cs_peers.sh"
echo "bench_cs.sh: BART $(bart version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "$(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg), $ITER iterations"
for S in "${SPOKES[@]}"; do
    D=$W/radial$S
    mkdir -p "$D"
    (cd "$D"
     bart traj -r -x 512 -y "$S" t >/dev/null
     bart scale 0.5 t traj
     bart phantom -s 8 -k -t traj ksp
     bart phantom -x 256 -S 8 sens
     bart phantom -x 256 ref)
    echo
    echo "== 256x256, 8 coils, $S spokes x 512 samples (2x readout oversampling)"
    # shellcheck disable=SC2086
    "$BENCH" solve "$D" -n "$ITER" --lambdas "$LAMBDAS" --device "$DEVICE" --methods "$METHODS" $FORGE_ARGS 2>/dev/null
    echo
    echo "BART pics ($ITER iterations; wall time of the whole command, load average $(cut -d' ' -f1 /proc/loadavg)):"
    echo
    bart_pics_rows "$D"
    echo
    sigpy_rows "$D"
done
