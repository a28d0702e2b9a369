#!/usr/bin/env bash
# CPU time of forge's compressed sensing against BART's pics at equal iterations on the same data, the two tools run
# alternately REPS times so that a changing load on a shared machine falls on both; medians and their ratio.
#
#   benchmarks/bench_cs_time.sh BUILD_DIR DATA_DIR [ITER] [REPS]    (defaults: 50 iterations, 5 repetitions)
#
# DATA_DIR: a bench_cs.sh radial folder or a bench_cs spiral folder (traj, ksp, sens, ref). Pairs timed, each on
# the same OMP_NUM_THREADS (THREADS, default nproc; forge and BART both thread with OpenMP):
#   wavelet L1: bench_cs solve --methods pogm --penalties wavelet --wavelet db2 (POGM, WAVELET_LAMBDA, default 0.005
#               relative to max |E^H y|) against bart pics -S -e -l1 -r BART_L1 (FISTA, default 0.005);
#   TV:         bench_cs solve --methods admm --penalties tv (TV_LAMBDA, default 0.002) against
#               bart pics -S -R T:3:0:BART_TV (ADMM, default 0.005).
# Columns: the whole command's wall time (reading the files, set-up, solve, writing), and the time inside: forge's
# set-up (NUFFT plan, Toeplitz kernels, E^H y) plus solve, BART's "Total Time" (its set-up, step-size power
# iteration and iterations). FIELD=on adds --field on to forge's commands (a spiral folder).
set -euo pipefail
BUILD=$(cd "${1:?usage: bench_cs_time.sh BUILD_DIR DATA_DIR [ITER] [REPS]}" && pwd)
D=$(cd "${2:?usage: bench_cs_time.sh BUILD_DIR DATA_DIR [ITER] [REPS]}" && pwd)
ITER=${3:-50}
REPS=${4:-5}
THREADS=${THREADS:-$(nproc)}
WAVELET_LAMBDA=${WAVELET_LAMBDA:-0.005}
TV_LAMBDA=${TV_LAMBDA:-0.002}
BART_L1=${BART_L1:-0.005}
BART_TV=${BART_TV:-0.005}
FIELD=${FIELD:-off}
BENCH=$BUILD/benchmarks/bench_cs
[ -x "$BENCH" ] || { echo "missing $BENCH: cmake --build $BUILD --target bench_cs" >&2; exit 2; }
command -v bart >/dev/null || { echo "bart is not on PATH (apt-get install bart)" >&2; exit 2; }
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bench_cs_time.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
     "OMP_NUM_THREADS=$THREADS, BART $(bart version), $ITER iterations, $REPS alternating repetitions, $D"
echo "load average (1, 5, 15 min) at the start: $(load)"

run_forge() {  # method penalty lambda -> "wall inner nrmse"
    local t0 t1 out
    t0=$(now)
    out=$("$BENCH" solve "$D" -n "$ITER" --methods "$1" --penalties "$2" --lambdas "$3" --wavelet db2 --baseline off \
          --field "$FIELD" 2>/dev/null)
    t1=$(now)
    local setup solve nrmse
    setup=$(sed -n 's/.*set-up (NUFFT plan, Toeplitz kernels, E^H y) \([0-9.]*\) s.*/\1/p' <<<"$out")
    # the best-lambda table's row of this method: | method | penalty | lambda | NRMSE | solve (s) |
    read -r nrmse solve < <(awk -F'|' -v m="$1" '$2 ~ " "m" " { gsub(/ /, ""); r = $5 " " $6 } END { print r }' \
                            <<<"$out")
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(awk -v a="$setup" -v b="$solve" \
          'BEGIN { print a + b }') $nrmse"
}
run_bart() {  # args... -> "wall inner nrmse"
    local t0 t1 total
    t0=$(now)
    bart pics -S -i "$ITER" "$@" -t "$D/traj" "$D/ksp" "$D/sens" "$T/img" >"$T/log" 2>&1
    t1=$(now)
    total=$(sed -n 's/^Total Time: \([0-9.]*\).*/\1/p' "$T/log")
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') ${total:-nan} $("$BENCH" nrmse "$T/img" "$D/ref")"
}

for pair in wavelet tv; do
    : >"$T/f_$pair"
    : >"$T/b_$pair"
    for r in $(seq 1 "$REPS"); do
        if [ $pair = wavelet ]; then
            run_forge pogm wavelet "$WAVELET_LAMBDA" >>"$T/f_$pair"
            run_bart -e -l1 -r "$BART_L1" >>"$T/b_$pair"
        else
            run_forge admm tv "$TV_LAMBDA" >>"$T/f_$pair"
            run_bart -R "T:3:0:$BART_TV" >>"$T/b_$pair"
        fi
        echo "  $pair repetition $r: forge $(tail -1 "$T/f_$pair"), BART $(tail -1 "$T/b_$pair") (wall, inner," \
             "NRMSE); load $(load)" >&2
    done
done
echo "load average at the end: $(load)"
echo
echo "| penalty | forge (method) | BART pics | forge wall [s] | BART wall [s] | wall ratio BART/forge |" \
     "forge set-up + solve [s] | BART Total Time [s] | ratio | forge NRMSE | BART NRMSE |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for pair in wavelet tv; do
    fw=$(cut -d' ' -f1 "$T/f_$pair" | median); bw=$(cut -d' ' -f1 "$T/b_$pair" | median)
    fi=$(cut -d' ' -f2 "$T/f_$pair" | median); bi=$(cut -d' ' -f2 "$T/b_$pair" | median)
    fq=$(cut -d' ' -f3 "$T/f_$pair" | head -1); bq=$(cut -d' ' -f3 "$T/b_$pair" | head -1)
    if [ $pair = wavelet ]; then names="| wavelet L1 | POGM db2, $WAVELET_LAMBDA | -e -l1 -r $BART_L1 (FISTA)"; else
        names="| TV | ADMM, $TV_LAMBDA | -R T:3:0:$BART_TV (ADMM)"; fi
    awk -v n="$names" -v fw="$fw" -v bw="$bw" -v fi="$fi" -v bi="$bi" -v fq="$fq" -v bq="$bq" 'BEGIN {
        printf "%s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %.4f |\n", n, fw, bw, bw / fw, fi, bi, bi / fi,
               fq, bq }'
done
