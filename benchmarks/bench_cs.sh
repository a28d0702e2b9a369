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
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
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
    echo "| method | lambda | NRMSE | wall (s) |"
    echo "| --- | --- | --- | --- |"
    for mode in l1 tv; do
        for r in $BART_LAMBDAS; do
            # -e: the step from the largest eigenvalue (without it pics -l1 warns and diverges on non-Cartesian data)
            if [ $mode = l1 ]; then args=(-e -l1 -r "$r"); name="pics -e -l1 (wavelets, FISTA)"; else
                args=(-R "T:3:0:$r"); name="pics -R T (TV, ADMM)"; fi
            t0=$(now)
            bart pics -S -i "$ITER" "${args[@]}" -t "$D/traj" "$D/ksp" "$D/sens" "$D/img_$mode" >/dev/null 2>&1
            t1=$(now)
            echo "| $name | $r | $("$BENCH" nrmse "$D/img_$mode" "$D/ref") | $(secs "$t0" "$t1") |"
        done
    done
    if "$PYTHON" -c "import sigpy" 2>/dev/null; then
        echo
        "$PYTHON" "$HERE/bench_cs_sigpy.py" "$D" "$ITER" $SIGPY_LAMBDAS
    else
        echo
        echo "(SigPy not importable with $PYTHON: its rows are left out)"
    fi
done
