#!/bin/bash
# Each bad input makes forge-recon exit non-zero with exactly one line on stderr naming the problem,
# and leaves no output file (nor a temporary one) behind.
#   usage: test_bad_inputs.sh FORGE_RECON FIXTURES_PROGRAM WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; FIXTURES=$2; W=$3
workdir "$W"
"$FIXTURES" "$W" || fail "fixture program failed"

check_bad() {  # name, expected stderr substring, args...
    local name=$1 expect=$2; shift 2
    local out="$W/out_$name"
    local outopt=(-o "$out")
    case " $* " in *" -o "*) outopt=() ;; esac
    "$RECON" "$@" "${outopt[@]}" >"$W/$name.stdout" 2>"$W/$name.stderr"
    local rc=$?
    [ $rc -ne 0 ] || fail "$name: exit code 0"
    local lines; lines=$(wc -l <"$W/$name.stderr")
    [ "$lines" -eq 1 ] || { cat "$W/$name.stderr" >&2; fail "$name: $lines lines on stderr, expected 1"; }
    grep -q '^forge-recon: error: ' "$W/$name.stderr" || fail "$name: stderr does not start with 'forge-recon: error:'"
    grep -qF -- "$expect" "$W/$name.stderr" || { cat "$W/$name.stderr" >&2; fail "$name: stderr does not mention '$expect'"; }
    if ls "$W" | grep -q "^out_$name"; then ls "$W" >&2; fail "$name: left an output file"; fi
    echo "ok  $name (exit $rc): $(cat "$W/$name.stderr")"
}

check_bad missing_file      "does not exist"              "$W/no_such_file.h5"
check_bad not_hdf5          "is not an HDF5 file"         "$W/fieldmap_10x12.nii"
check_bad not_ismrmrd       "not an ISMRMRD dataset"      "$W/plain.h5"
check_bad no_acquisitions   "has no acquisitions"         "$W/noacq.h5"
check_bad traj_dims         "trajectories have 3 dimensions" "$W/traj3d.h5"
check_bad traj_missing      "carry no trajectory"         "$W/notraj.h5"
check_bad fieldmap_size     "field map"                   "$W/good.h5" --fieldmap "$W/fieldmap_10x12.nii"
check_bad smaps_size        "sensitivity maps"            "$W/good.h5" --smaps "$W/smaps_wrong.h5:/maps"
check_bad smaps_missing_ds  "does not exist"              "$W/good.h5" --smaps "$W/smaps_wrong.h5:/nope"
check_bad fieldmap_missing  "does not exist"              "$W/good.h5" --fieldmap "$W/nothere.nii"
check_bad bad_option        "--bogus"                     "$W/good.h5" --bogus
check_bad no_output_folder  "does not exist"              "$W/good.h5" -o "$W/out_no_output_folder_dir/out"

# the same small file with maps of the right size reconstructs (so the failures above are the sizes)
"$RECON" "$W/good.h5" --smaps "$W/smaps_right.h5:/maps" -n 2 -q -o "$W/good_recon" >"$W/good.stdout" 2>"$W/good.stderr" \
    || { cat "$W/good.stderr" >&2; fail "good.h5 with right-size maps failed"; }
[ -s "$W/good_recon.nii" ] && [ -s "$W/good_recon.png" ] || fail "good.h5: outputs missing"
echo "ok  good input with right-size maps"
