#!/usr/bin/env bash
# Compressed sensing on an undersampled spiral with a strong field map, from forge's simulator (bench_cs spiral:
# the exact field-corrected DFT, noise): forge's POGM (wavelet L1) and ADMM (exact TV) with field correction and
# without, beside BART's pics (-l1 wavelets, -R T) and SigPy's L1WaveletRecon / TotalVariationRecon, which model no
# field; each method's best NRMSE over a lambda sweep, and its time. docs/benchmarks.md, "Compressed sensing".
#
#   benchmarks/bench_cs_spiral.sh BUILD_DIR [WORK_DIR]
#
# Environment: SPIRAL (bench_cs spiral's options; default 128x128, 8 coils, 4 shots of 4 turns: 4x below Nyquist,
# 2048 samples of 10 us: 20.5 ms readouts, max |f| 150 Hz, noise 0.01), ITER (default 50), LAMBDAS (forge's, relative
# to max |E^H y|), BART_LAMBDAS (-r of pics -l1 and -R T), SIGPY_LAMBDAS (relative, as forge's), PYTHON (with sigpy;
# default python3), WAVELET (forge's family; default db2, BART's).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_cs_spiral.sh BUILD_DIR [WORK_DIR]}" && pwd)
W=${2:-$(mktemp -d)}
SPIRAL=${SPIRAL:---size 128 --coils 8 --shots 4 --turns 4 --samples 2048 --dwell-us 10 --max-hz 150 --noise 0.01}
ITER=${ITER:-50}
LAMBDAS=${LAMBDAS:-0.00035,0.0005,0.0007,0.001,0.0014,0.002,0.0028,0.004,0.0057,0.008,0.0113}
BART_LAMBDAS=${BART_LAMBDAS:-0.001 0.002 0.004 0.008 0.0113 0.016 0.032 0.064}
SIGPY_LAMBDAS=${SIGPY_LAMBDAS:-0.001 0.002 0.004 0.008 0.016 0.032}
PYTHON=${PYTHON:-python3}
WAVELET=${WAVELET:-db2}  # WaveletL1Penalty's default
BENCH=$BUILD/benchmarks/bench_cs
[ -x "$BENCH" ] || { echo "missing $BENCH: cmake --build $BUILD --target bench_cs" >&2; exit 2; }
command -v bart >/dev/null || { echo "bart is not on PATH (apt-get install bart)" >&2; exit 2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench_cs_peers.sh
source "$HERE/bench_cs_peers.sh"
echo "bench_cs_spiral.sh: BART $(bart version), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "$(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg), $ITER iterations"
D=$W/spiral
mkdir -p "$D"
# shellcheck disable=SC2086
"$BENCH" spiral "$D" $SPIRAL
for field in on off; do
    echo
    echo "== forge, field correction $field"
    "$BENCH" solve "$D" -n "$ITER" --lambdas "$LAMBDAS" --methods pogm --penalties wavelet --wavelet "$WAVELET" \
        --field $field 2>/dev/null
    "$BENCH" solve "$D" -n "$ITER" --lambdas "$LAMBDAS" --methods admm --penalties tv --field $field \
        --baseline off 2>/dev/null
done
echo
echo "BART pics ($ITER iterations, no field model; wall time of the whole command, load average" \
     "$(cut -d' ' -f1 /proc/loadavg)):"
echo
bart_pics_rows "$D"
echo
sigpy_rows "$D"
