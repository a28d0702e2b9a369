#!/bin/bash
# Hostile ISMRMRD files: make_hostile_mrd.py edits ISMRMRD's own Shepp-Logan file (HDF5 structure, types,
# sizes the headers claim, counts, values, damaged files, stored maps). Each file forge-recon must refuse
# ends with exit code 2, exactly one 'forge-recon: error:' line naming the problem, no output file, within
# 20 s and (outside sanitizer builds) under a 400 MB address-space limit; each file that is valid MRD written
# another way (UTF-8 or fixed-length header, float64 or complex samples, compressed chunks) gives the same
# image, byte for byte, as the original file.
#   usage: test_hostile_mrd.sh FORGE_RECON WORKDIR [sanitized]
#   (exit 77 = skipped without ismrmrd-tools or a python3 with h5py and numpy; "sanitized": no ulimit -v,
#   which AddressSanitizer's shadow memory cannot live with)
source "$(dirname "$0")/common.sh"
RECON=$(readlink -f "$1"); W=$(readlink -m "$2"); MODE=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "SKIP: ismrmrd-tools not installed"; exit 77; }
# Debian's python3-h5py (the HDF5 forge links) serves /usr/bin/python3, which may not be the python3 first on PATH.
PY=""
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import h5py, numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with h5py and numpy (Debian: python3-h5py)"; exit 77; }
workdir "$W"
cd "$W" || fail "cd $W"
"$GEN" -m 32 -c 4 -n 0.01 -k -o "$W/base.h5" >/dev/null || fail "generator failed"
"$PY" "$HERE/make_hostile_mrd.py" "$W/base.h5" "$W/files" || fail "make_hostile_mrd.py failed"

LIB_KB=$(ldd "$RECON" 2>/dev/null | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
LIMIT_KB=$((${LIB_KB:-0} + 400000))
limited() {
    if [ "$MODE" = sanitized ]; then
        ( export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 && exec timeout 60 "$RECON" "$@" )
    else
        ( ulimit -v $LIMIT_KB && export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 && exec timeout 20 "$RECON" "$@" )
    fi
}
describe_rc() {
    case $1 in
        124) echo "still running after the time limit (a hang)" ;;
        13[0-9]|14[0-9]|15[0-9]) echo "killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null))" ;;
        *) echo "exit code $1" ;;
    esac
}

limited "$W/base.h5" -n 3 -q --device cpu -o "$W/base_recon" >"$W/base.stdout" 2>"$W/base.stderr" \
    || { cat "$W/base.stderr" >&2; fail "the unedited file does not reconstruct"; }
[ -s "$W/base_recon.nii" ] || fail "the unedited file wrote no image"

refused=0; same=0; failures=()
while IFS=$'\t' read -r name expect words args; do
    out="$W/out/$name"; mkdir -p "$W/out"
    # shellcheck disable=SC2086  # args: extra options, split on spaces
    limited "$W/files/$name.h5" -n 3 -q --device cpu $args -o "$out" >"$W/out/$name.stdout" 2>"$W/out/$name.stderr"
    rc=$?
    if [ "$expect" = same ]; then
        if [ $rc -ne 0 ]; then
            failures+=("$name: $(describe_rc $rc), expected a reconstruction: $(head -c 300 "$W/out/$name.stderr")")
        elif ! cmp -s "$out.nii" "$W/base_recon.nii"; then
            failures+=("$name: the image differs from the unedited file's")
        else
            same=$((same + 1)); echo "ok  $name: the same image as the unedited file"
        fi
        continue
    fi
    lines=$(wc -l <"$W/out/$name.stderr")
    if [ $rc -ne 2 ]; then
        failures+=("$name: $(describe_rc $rc), expected 2: $(head -c 300 "$W/out/$name.stderr" | tr '\n' ' ')")
        continue
    fi
    if [ "$lines" -ne 1 ] || ! grep -q '^forge-recon: error: ' "$W/out/$name.stderr"; then
        failures+=("$name: expected one 'forge-recon: error:' line, got $lines: $(head -c 300 "$W/out/$name.stderr" | tr '\n' ' ')")
        continue
    fi
    missing=""
    IFS='|' read -ra want <<<"$words"
    for w in "${want[@]}"; do grep -qF -- "$w" "$W/out/$name.stderr" || missing="$missing '$w'"; done
    if [ -n "$missing" ]; then
        failures+=("$name: the message does not mention$missing: $(cat "$W/out/$name.stderr")")
        continue
    fi
    if ls "$W/out" | grep -q "^$name\.\(nii\|png\)"; then
        failures+=("$name: left an output file: $(ls "$W/out" | grep "^$name\." | tr '\n' ' ')")
        continue
    fi
    refused=$((refused + 1)); echo "ok  $name: $(cat "$W/out/$name.stderr")"
done <"$W/files/manifest.tsv"

total=$(wc -l <"$W/files/manifest.tsv")
if [ ${#failures[@]} -gt 0 ]; then
    printf 'FAIL: %s\n' "${failures[@]}" >&2
    fail "${#failures[@]} of $total hostile files mishandled"
fi
echo "ok  $refused files refused (exit 2, one line, no output), $same valid variants reconstruct identically"
