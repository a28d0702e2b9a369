#!/bin/bash
# Outputs never replace inputs and never leave partial files: an output naming an input (by path or as the same
# file) or another output, or one whose folder is missing or not writable, is refused before anything is read
# (exit 2, one line naming both options, the input byte-identical); a write past the file-size limit (ulimit -f,
# SIGXFSZ not ignored), to a full disk or to a stdout whose reader is gone exits 1 with one line naming what
# failed, and leaves no NAME.part<pid> behind.
#   usage: test_output_safety.sh FORGE_RECON FIXTURES_PROGRAM WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$(readlink -f "$1"); FIXTURES=$(readlink -f "$2"); W=$(readlink -m "$3")
workdir "$W"
mkdir -p "$W/fixtures" && "$FIXTURES" "$W/fixtures" >/dev/null || fail "fixture program failed"
RUN=(-n 2 -q --device cpu)

# refused NAME WANT ARGS...: in a fresh folder $W/NAME holding inp.h5 (good.h5), fm.nii, maps.h5, k.cfl/.hdr and
# t.cfl/.hdr (any bytes: nothing is read), run ARGS there; exit 2, one line containing WANT, every file as it was
# and nothing added
refused() {
    local name=$1 want=$2 d=$W/$1
    shift 2
    mkdir -p "$d/sub" && cp "$W/fixtures/good.h5" "$d/inp.h5" && cp "$W/fixtures/fieldmap_nan.nii" "$d/fm.nii" &&
        cp "$W/fixtures/smaps_right.h5" "$d/maps.h5" && cp "$W/fixtures/good.mrd" "$d/good.mrd" || fail "$name: setup"
    for f in k.cfl k.hdr t.cfl t.hdr; do head -c 64 /dev/urandom >"$d/$f"; done
    local before after
    before=$(cd "$d" && find . -type f | sort | xargs sha256sum)
    (cd "$d" && "$RECON" "$@" <"${STDIN:-/dev/null}") >"$W/$name.stdout" 2>"$W/$name.stderr"
    local rc=$?
    after=$(cd "$d" && find . -type f | sort | xargs sha256sum)
    [ $rc -eq 2 ] || { cat "$W/$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(wc -l <"$W/$name.stderr")" -eq 1 ] && grep -qF -- "$want" "$W/$name.stderr" \
        || { cat "$W/$name.stderr" >&2; fail "$name: expected one line saying: $want"; }
    [ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "$name: files changed or added"; }
    [ ! -s "$W/$name.stdout" ] || { cat "$W/$name.stdout" >&2; fail "$name: printed before refusing"; }
    echo "ok  $name: $(cat "$W/$name.stderr")"
}

# 1. an output that is an input
refused mrd_out_input "--mrd-out 'inp.h5' is the same file as the input 'inp.h5'" inp.h5 "${RUN[@]}" --mrd-out inp.h5
refused report_input "--report 'inp.h5' is the same file as the input 'inp.h5'" inp.h5 "${RUN[@]}" --report inp.h5
refused mrd_out_dotdot "--mrd-out 'sub/../inp.h5' is the same file as the input 'inp.h5'" \
    inp.h5 "${RUN[@]}" --mrd-out sub/../inp.h5
mkdir -p "$W/hardlink" && ln "$W/fixtures/good.h5" "$W/hardlink/other.h5" || fail "hardlink: setup"
refused hardlink "--mrd-out 'other.h5' is the same file as the input '$W/fixtures/good.h5'" \
    "$W/fixtures/good.h5" "${RUN[@]}" --mrd-out other.h5
refused prefix_fieldmap "-o 'fm.nii' is the same file as --fieldmap 'fm.nii'" inp.h5 "${RUN[@]}" --fieldmap fm.nii -o fm
refused smaps_h5 "--mrd-out 'maps.h5' is the same file as --smaps 'maps.h5'" \
    inp.h5 "${RUN[@]}" --smaps maps.h5:/maps --mrd-out maps.h5
refused bart_hdr "--report 'k.hdr' is the same file as --bart-kspace 'k.hdr'" \
    --bart-kspace k --bart-traj t "${RUN[@]}" --report k.hdr
refused bart_cfl "--mrd-out './t.cfl' is the same file as --bart-traj 't.cfl'" \
    --bart-kspace k.cfl --bart-traj t "${RUN[@]}" --mrd-out ./t.cfl
STDIN=$W/stream_in/good.mrd refused stream_in "--mrd-out 'good.mrd' is the same file as --stream's stdin '$W/stream_in/good.mrd'" \
    --stream "${RUN[@]}" --mrd-out good.mrd

# 2. one file named by two outputs
refused two_outputs "--mrd-out './out.png' and -o 'out.png' name the same file" inp.h5 "${RUN[@]}" -o out --mrd-out ./out.png
refused report_mrd "--report 'sub/../x.h5' and --mrd-out 'x.h5' name the same file" \
    inp.h5 "${RUN[@]}" --mrd-out x.h5 --report sub/../x.h5

# 3. every output's folder is checked before the input is read
refused mrd_out_missing "--mrd-out 'missing/x.h5': folder 'missing' does not exist" inp.h5 "${RUN[@]}" --mrd-out missing/x.h5
refused report_missing "--report 'missing/r.json': folder 'missing' does not exist" inp.h5 "${RUN[@]}" --report missing/r.json
# a folder this user cannot write into: as root, run as nobody (setpriv) on copies nobody can read
NOBODY=()
if [ "$(id -u)" -eq 0 ]; then
    if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
        NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
        # a build under a folder only root may enter (/root/...): nobody cannot start forge-recon at all
        "${NOBODY[@]}" "$RECON" --help >/dev/null 2>&1 || NOBODY=(skip)
    else
        NOBODY=(skip)
    fi
fi
if [ "${NOBODY[0]:-}" != skip ]; then
    U=$(mktemp -d /tmp/forge_output_safety.XXXXXX) || fail "mktemp"
    mkdir -p "$U/ro" && cp "$W/fixtures/good.h5" "$U/inp.h5" && chown 65534 "$U" && chmod 755 "$U" && chmod 555 "$U/ro" && chmod 644 "$U/inp.h5" \
        || fail "unwritable: setup"
    for spec in "--mrd-out ro/x.h5|--mrd-out 'ro/x.h5': folder 'ro' is not writable" \
                "--report ro/r.json|--report 'ro/r.json': folder 'ro' is not writable" \
                "-o ro/x|-o 'ro/x': output folder 'ro' is not writable" "--dicom ro/d|folder 'ro' is not writable"; do
        args=${spec%%|*}; want=${spec#*|}
        # shellcheck disable=SC2086
        (cd "$U" && "${NOBODY[@]}" "$RECON" inp.h5 "${RUN[@]}" $args) >"$W/ro.stdout" 2>"$W/ro.stderr"
        rc=$?
        if [ $rc -eq 2 ] && grep -q "built without DCMTK" "$W/ro.stderr"; then continue; fi
        [ $rc -eq 2 ] && [ "$(wc -l <"$W/ro.stderr")" -eq 1 ] && grep -qF -- "$want" "$W/ro.stderr" && [ ! -s "$W/ro.stdout" ] \
            || { cat "$W/ro.stdout" "$W/ro.stderr" >&2; rm -rf "$U"; fail "unwritable: $args: exit $rc, expected 2 saying: $want"; }
        echo "ok  unwritable folder: $args: $(cat "$W/ro.stderr")"
    done
    [ -z "$(ls -A "$U/ro")" ] || { ls -A "$U/ro" >&2; rm -rf "$U"; fail "unwritable: files in ro/"; }
    rm -rf "$U"
else
    echo "skip: unwritable folders (running as root without a working setpriv, or forge-recon not executable by nobody)"
fi

# 4. ulimit -f, SIGXFSZ at its default action: the run is not killed by it; exit 1, one line naming the file that
#    did not fit, the earlier files byte-identical, no temporary left
mkdir -p "$W/fsize" || fail "fsize: setup"
fsize_run() { "$RECON" "$W/fixtures/good.h5" "${RUN[@]}" -o "$W/fsize/out" --mrd-out "$W/fsize/out.h5" --report "$W/fsize/out.json"; }
fsize_run >/dev/null 2>"$W/fsize.stderr" || { cat "$W/fsize.stderr" >&2; fail "fsize: first run failed"; }
largest=$(cd "$W/fsize" && ls -S | head -n 1); second=$(cd "$W/fsize" && ls -S | sed -n 2p)
limit_kb=$(( $(stat -c %s "$W/fsize/$second") / 1024 + 1 ))
[ $((limit_kb * 1024)) -lt "$(stat -c %s "$W/fsize/$largest")" ] || fail "fsize: outputs too alike in size ($second, $largest)"
for f in out.nii out.png out.h5 out.json; do head -c "$(stat -c %s "$W/fsize/$f")" /dev/urandom >"$W/fsize/$f"; done
before=$(cd "$W/fsize" && sha256sum out.*)
trap - XFSZ
( ulimit -f "$limit_kb"; fsize_run ) >"$W/fsize.stdout" 2>"$W/fsize.stderr"
rc=$?
[ $rc -eq 1 ] || { cat "$W/fsize.stderr" >&2; fail "fsize: exit $rc, expected 1 (153: killed by SIGXFSZ)"; }
[ "$(wc -l <"$W/fsize.stderr")" -eq 1 ] && grep -qF "forge-recon: error: " "$W/fsize.stderr" &&
    grep -qF "$W/fsize/$largest' failed: File too large (over the file-size limit, ulimit -f)" "$W/fsize.stderr" \
    || { cat "$W/fsize.stderr" >&2; fail "fsize: expected one line naming $largest and the file-size limit"; }
[ "$(cd "$W/fsize" && sha256sum out.*)" = "$before" ] || fail "fsize: an earlier output was changed"
[ "$(ls -A "$W/fsize" | tr '\n' ' ')" = "out.h5 out.json out.nii out.png " ] || { ls -A "$W/fsize" >&2; fail "fsize: files left"; }
echo "ok  ulimit -f $limit_kb ($largest larger): exit 1, $(cat "$W/fsize.stderr")"

# 4b. a full disk (ENOSPC): an 8 KiB tmpfs in a mount namespace of its own (unshare -m, as root), too small for
#     the run's ISMRMRD images: exit 1, one line naming the file and the full disk, nothing left on it
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$W/full" || fail "enospc: setup"
    unshare -m bash -c 'mount -t tmpfs -o size=8k tmpfs "$1" || exit 99; shift; "$@"; rc=$?; ls -A "$0" >"$0.left"; exit $rc' \
        "$W/full" "$W/full" "$RECON" "$W/fixtures/good.h5" "${RUN[@]}" -o "$W/full/out" --mrd-out "$W/full/out.h5" \
        >"$W/full.stdout" 2>"$W/full.stderr"
    rc=$?
    if [ $rc -eq 99 ]; then
        echo "skip: a full disk (no tmpfs mount)"
    else
        [ $rc -eq 1 ] && [ "$(wc -l <"$W/full.stderr")" -eq 1 ] && \
            grep -qF "$W/full/out.h5' failed: No space left on device (the disk is full)" "$W/full.stderr" \
            || { cat "$W/full.stderr" >&2; fail "enospc: exit $rc, expected 1 and one line naming out.h5 and the full disk"; }
        [ ! -s "$W/full.left" ] || { cat "$W/full.left" >&2; fail "enospc: files left on the full disk"; }
        echo "ok  a full disk: exit 1, $(cat "$W/full.stderr")"
    fi
else
    echo "skip: a full disk (needs root and unshare -m)"
fi

# 5. SIGXFSZ sent while the outputs are staged: the run stops, exit 1, one line, nothing left
mkdir -p "$W/xfsz" || fail "xfsz: setup"
FORGE_TEST_PAUSE_BEFORE_COMMIT=30 "$RECON" "$W/fixtures/good.h5" "${RUN[@]}" -o "$W/xfsz/out" >/dev/null 2>"$W/xfsz.stderr" &
pid=$! t=0
until grep -q 'test hook: pausing' "$W/xfsz.stderr" 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { cat "$W/xfsz.stderr" >&2; fail "xfsz: the run ended before it paused"; }
    sleep 0.1; t=$((t + 1)); [ $t -lt 300 ] || { kill -KILL $pid; fail "xfsz: no pause within 30 s"; }
done
kill -XFSZ $pid
wait $pid
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c 'forge-recon: error: ' "$W/xfsz.stderr")" -eq 1 ] && grep -q 'SIGXFSZ' "$W/xfsz.stderr" \
    || { cat "$W/xfsz.stderr" >&2; fail "xfsz: exit $rc, expected 1 and one line naming SIGXFSZ"; }
[ -z "$(ls -A "$W/xfsz")" ] || { ls -A "$W/xfsz" >&2; fail "xfsz: files left"; }
echo "ok  SIGXFSZ while staged: exit 1, $(grep 'error' "$W/xfsz.stderr")"

# 6. --stream: images on stdout past the file-size limit, and to a reader that is gone: exit 1, one line
( ulimit -f 1; "$RECON" --stream "${RUN[@]}" <"$W/fixtures/good.mrd" >"$W/stream.out" 2>"$W/stream.stderr" )
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$W/stream.stderr")" -eq 1 ] && grep -qF "File too large" "$W/stream.stderr" \
    && grep -qF "stream" "$W/stream.stderr" \
    || { cat "$W/stream.stderr" >&2; fail "stream over ulimit -f 1: exit $rc, expected 1 and one line"; }
echo "ok  --stream over ulimit -f 1: exit 1, $(cat "$W/stream.stderr")"
"$RECON" --stream "${RUN[@]}" <"$W/fixtures/good.mrd" 2>"$W/pipe.stderr" | true
rc=${PIPESTATUS[0]}
[ $rc -eq 1 ] && [ "$(wc -l <"$W/pipe.stderr")" -eq 1 ] && grep -qF "Broken pipe" "$W/pipe.stderr" \
    || { cat "$W/pipe.stderr" >&2; fail "stream into a closed pipe: exit $rc, expected 1 and one line"; }
echo "ok  --stream into a closed pipe: exit 1, $(cat "$W/pipe.stderr")"
