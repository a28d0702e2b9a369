#!/bin/bash
# forge-recon under MPI: 'mpiexec -n 2 forge-recon' (frames split over the ranks, gathered on rank 0) writes
# byte for byte the NIfTI and PNG files one process writes, for the demo and for an ISMRMRD file with coil
# maps and a field map estimated from the data (rank 0 estimates them, the others receive them); a rank
# that fails (before or after the first collective) stops every rank with a message naming it, and no output
# is written.
#   usage: test_mpi.sh FORGE_RECON WORKDIR MPIEXEC
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2; MPIEXEC=$3
workdir "$W"
MPI=(timeout 120 "$MPIEXEC")  # a hang fails the test in minutes, not at ctest's limit
# Open MPI: CI runs as root (other MPIs ignore these), and containers may forbid the cross-memory attach of
# its shared-memory transport; 2 ranks on a machine that may have fewer cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    MPI+=(--oversubscribe)
fi
same_outputs() {  # same_outputs DIR_A DIR_B FILE...
    local a=$1 b=$2; shift 2
    for f in "$@"; do
        [ -s "$a/$f" ] || fail "one process did not write $f"
        [ -s "$b/$f" ] || fail "two ranks did not write $f"
        cmp -s "$a/$f" "$b/$f" || fail "$f differs between one process and two ranks"
    done
}
DEMO=(--demo --demo-size 32 --demo-slices 4 --demo-coils 4 -n 3 --fieldmap-iterations 50 --device cpu)
mkdir -p "$W/one" "$W/two"
"$RECON" "${DEMO[@]}" -o "$W/one/demo" --report "$W/one.json" >"$W/one.stdout" 2>"$W/one.stderr" \
    || { cat "$W/one.stderr" >&2; fail "demo (one process) failed"; }
"${MPI[@]}" -n 2 "$RECON" "${DEMO[@]}" -o "$W/two/demo" --report "$W/two.json" >"$W/two.stdout" 2>"$W/two.stderr" \
    || { cat "$W/two.stderr" "$W/two.stdout" >&2; fail "demo (2 ranks) failed"; }
same_outputs "$W/one" "$W/two" demo_uncorrected.nii demo_corrected.nii demo_estimated.nii demo_estimated_smaps.nii \
    demo_estimated_fieldmap.nii demo_comparison.png demo_corrected.png
grep -q "rank 2/2: 2 frame(s)" "$W/two.stdout" || fail "no per-rank line for rank 2 in the output"
grep -q "\[rank 2/2\].*iteration" "$W/two.stderr" || fail "no progress lines of rank 2"
[ "$(grep -c 'forge-recon --demo results' "$W/two.stdout")" = 1 ] || fail "results printed more than once"
# the report of 2 ranks holds every rank's solves, as one process reports them
python3 - "$W/one.json" "$W/two.json" <<'PYEOF' || fail "the report of 2 ranks differs from one process's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["processes"], b["processes"]) == (1, 2), (a["processes"], b["processes"])
fields = ["slice", "frame", "coil", "segments", "iterations", "stop_reason", "relative_gradient", "final_cost"]
for ra, rb in zip(a["reconstructions"], b["reconstructions"]):
    sa = [[s[k] for k in fields] for s in ra["solves"]]
    sb = [[s[k] for k in fields] for s in rb["solves"]]
    assert len(sa) == 4 and sa == sb, (ra["name"], sa, sb)
    assert ra["quality"] == rb["quality"], ra["name"]
assert a["iterations"] == b["iterations"]
PYEOF
echo "ok  demo: 2 ranks write the same bytes as one process, and report the same solves"

# file mode, maps estimated from the raw data (coil maps from the field-map scan, field map from its echoes)
FILE=("$W/one/demo.h5" --smaps estimate --fieldmap-scan "$W/one/demo_fieldmap_scan.h5" --fieldmap-iterations 50
      -n 3 --device cpu)
"$RECON" "${FILE[@]}" -o "$W/one/file" >"$W/one_file.stdout" 2>&1 || { cat "$W/one_file.stdout" >&2; fail "file (one process) failed"; }
"${MPI[@]}" -n 2 "$RECON" "${FILE[@]}" -o "$W/two/file" >"$W/two_file.stdout" 2>&1 \
    || { cat "$W/two_file.stdout" >&2; fail "file (2 ranks) failed"; }
same_outputs "$W/one" "$W/two" file.nii file.png
echo "ok  file with estimated maps: 2 ranks write the same bytes as one process"

# rank 2 cannot read its input: both ranks stop, the message names rank 2, nothing is written
"${MPI[@]}" -n 1 "$RECON" "$W/one/demo.h5" -o "$W/two/failed" -n 3 --device cpu : \
    -n 1 "$RECON" "$W/missing.h5" -o "$W/two/failed" -n 3 --device cpu >"$W/fail.stdout" 2>"$W/fail.stderr" \
    && fail "a run with a failing rank succeeded"
grep -q "forge-recon: error: rank 2/2: .*missing.h5" "$W/fail.stderr" || { cat "$W/fail.stderr" >&2; fail "no error naming rank 2"; }
ls "$W/two"/failed* >/dev/null 2>&1 && fail "a failed run wrote $(ls "$W/two"/failed*)"
echo "ok  a failing rank stops the run with its message, no output"

# rank 2 fails after the maps were broadcast, while rank 1 reconstructs: rank 1 learns of it at the next
# checkpoint, both stop, nothing is written
"${MPI[@]}" -n 1 "$RECON" "$W/one/demo.h5" -o "$W/two/late" -n 3 --device cpu : \
    -n 1 "$RECON" "$W/one/demo.h5" -o "$W/two/late" -n 3 --device cpu --operator fft >"$W/late.stdout" 2>"$W/late.stderr" \
    && fail "a run whose rank 2 cannot use --operator fft succeeded"
grep -q "forge-recon: error: rank 2/2: --operator fft" "$W/late.stderr" || { cat "$W/late.stderr" >&2; fail "no error naming rank 2"; }
grep -q "\[rank 1/2\].*iteration" "$W/late.stderr" || fail "rank 1 did not reconstruct while rank 2 failed"
ls "$W/two"/late* >/dev/null 2>&1 && fail "a failed run wrote $(ls "$W/two"/late*)"
echo "ok  a rank failing while the others reconstruct stops the run, no output"
