# Sourced by bench_cs.sh and bench_cs_spiral.sh: the peers' rows of the compressed-sensing comparison on one data
# folder D (traj, ksp, sens, ref as BART's arrays): BART pics -l1 (wavelets, FISTA) and -R T (TV, ADMM) at each of
# BART_LAMBDAS with ITER iterations, then SigPy's recons when PYTHON imports sigpy. Needs BENCH (bench_cs, for the
# NRMSE) and HERE (this folder).
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# bart_pics_rows D: one table row per penalty and lambda (NRMSE against D/ref, wall time of the whole command).
bart_pics_rows() {
    local D=$1 mode r t0 t1 name args
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
}

# sigpy_rows D: SigPy's rows, or a line saying why there are none.
sigpy_rows() {
    if "$PYTHON" -c "import sigpy" 2>/dev/null; then
        # shellcheck disable=SC2086
        "$PYTHON" "$HERE/bench_cs_sigpy.py" "$1" "$ITER" $SIGPY_LAMBDAS
    else
        echo "(SigPy not importable with $PYTHON: its rows are left out)"
    fi
}
