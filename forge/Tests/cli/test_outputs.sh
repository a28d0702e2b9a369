#!/bin/bash
# A failed run leaves every file that was there before it exactly as it was; a successful run that
# replaces a file says so.
#   usage: test_outputs.sh FORGE_RECON FIXTURES_PROGRAM WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$(readlink -f "$1"); FIXTURES=$(readlink -f "$2"); W=$(readlink -m "$3")  # absolute: the tests cd
workdir "$W"
mkdir -p "$W/fixtures" && "$FIXTURES" "$W/fixtures" || fail "fixture program failed"
DATA=$W/fixtures/good.h5

# 1. an earlier mine.nii and a folder named mine.png: 'forge-recon data.h5 -o mine' must fail without
#    touching mine.nii (it used to exit 1 with mine.nii deleted)
mkdir -p "$W/a/mine.png" && head -c 4096 /dev/urandom >"$W/a/mine.nii" && cp "$W/a/mine.nii" "$W/mine.nii.before" \
    || fail "setup a"
(cd "$W/a" && "$RECON" "$DATA" -n 2 -q --device cpu -o mine) >"$W/a.stdout" 2>"$W/a.stderr"
rc=$?
[ $rc -ne 0 ] || fail "a: exit code 0 with a folder in the way"
cmp -s "$W/a/mine.nii" "$W/mine.nii.before" || fail "a: the earlier mine.nii was changed or removed"
[ "$(wc -l <"$W/a.stderr")" -eq 1 ] || { cat "$W/a.stderr" >&2; fail "a: expected one line on stderr"; }
grep -qF "mine.png" "$W/a.stderr" || { cat "$W/a.stderr" >&2; fail "a: the error does not name mine.png"; }
[ -d "$W/a/mine.png" ] || fail "a: the folder mine.png is gone"
[ "$(ls -A "$W/a" | tr '\n' ' ')" = "mine.nii mine.png " ] || { ls -A "$W/a" >&2; fail "a: files left behind"; }
echo "ok  existing mine.nii and folder mine.png: exit $rc, mine.nii byte-identical: $(cat "$W/a.stderr")"

# 2. a failure while the outputs are written (the largest one exceeds a file-size limit) leaves all
#    earlier files (the report too) byte-identical and no temporary files. Whatever the demo writes is found by
#    a first run.
mkdir -p "$W/b" || fail "setup b"
run_demo() { "$RECON" --demo --demo-size 32 --demo-slices 1 --demo-coils 4 -n 2 -q --device cpu -o "$W/b/demo" \
    --report "$W/b/demo.json"; }
run_demo >"$W/b1.stdout" 2>"$W/b1.stderr" || { cat "$W/b1.stderr" >&2; fail "b: first demo run failed"; }
mapfile -t files < <(cd "$W/b" && find . -type f | sort)
[ ${#files[@]} -ge 2 ] || fail "b: the demo wrote ${#files[@]} files"
sizes=$(cd "$W/b" && stat -c %s "${files[@]}" | sort -n)
largest=$(echo "$sizes" | tail -n 1); second=$(echo "$sizes" | tail -n 2 | head -n 1)
limit_kb=$((second / 1024 + 8))  # ulimit -f counts 1024-byte blocks
[ $((limit_kb * 1024)) -lt "$largest" ] || fail "b: outputs too alike in size to fail one ($second, $largest)"
mkdir -p "$W/b_saved"
for f in "${files[@]}"; do   # earlier files: random bytes of the same size
    head -c "$(stat -c %s "$W/b/$f")" /dev/urandom >"$W/b/$f" && cp "$W/b/$f" "$W/b_saved/$(basename "$f")" \
        || fail "b: setup $f"
done
# SIGXFSZ at its default action (which kills a process without a word): forge-recon catches it and reports the write
( trap - XFSZ; ulimit -f $limit_kb; run_demo ) >"$W/b2.stdout" 2>"$W/b2.stderr"
rc=$?
[ $rc -ne 0 ] || fail "b: the demo succeeded although an output exceeds ulimit -f $limit_kb"
for f in "${files[@]}"; do
    cmp -s "$W/b/$f" "$W/b_saved/$(basename "$f")" || fail "b: the earlier $f was changed or removed by the failed run"
done
# a failed write is a failure of the machine (exit 1), reported in one line, not a crash at exit
[ $rc -eq 1 ] || { cat "$W/b2.stderr" >&2; fail "b: exit code $rc, expected 1"; }
[ "$(wc -l <"$W/b2.stderr")" -eq 1 ] && grep -q '^forge-recon: error: ' "$W/b2.stderr" \
    || { cat "$W/b2.stderr" >&2; fail "b: expected one error line"; }
[ "$(cd "$W/b" && find . -type f | sort)" = "$(printf '%s\n' "${files[@]}")" ] \
    || { ls -A "$W/b" >&2; fail "b: the failed run left files behind"; }
echo "ok  failure writing the largest output (ulimit -f $limit_kb): exit $rc, ${#files[@]} earlier files byte-identical"

# 3. a successful run replaces an earlier file and says so
mkdir -p "$W/c" && head -c 4096 /dev/urandom >"$W/c/mine.nii" && cp "$W/c/mine.nii" "$W/c_before.nii" || fail "setup c"
(cd "$W/c" && "$RECON" "$DATA" -n 2 -q --device cpu -o mine) >"$W/c.stdout" 2>"$W/c.stderr" \
    || { cat "$W/c.stderr" >&2; fail "c: run failed"; }
cmp -s "$W/c/mine.nii" "$W/c_before.nii" && fail "c: mine.nii was not replaced"
grep -q 'wrote mine.nii (replaced an existing file)' "$W/c.stdout" || { cat "$W/c.stdout" >&2; fail "c: no note that mine.nii was replaced"; }
grep -q 'wrote mine.png$' "$W/c.stdout" || { cat "$W/c.stdout" >&2; fail "c: mine.png reported as replaced or not written"; }
[ "$(ls -A "$W/c" | tr '\n' ' ')" = "mine.nii mine.png " ] || { ls -A "$W/c" >&2; fail "c: files left behind"; }
echo "ok  successful run over an earlier mine.nii: replaced, and said so"

# 4. -o naming an existing folder, with or without the trailing slash, writes into it under the name the
#    outputs get without -o (<input stem>_recon; the demo's demo_*), and nothing beside it; a folder that
#    does not exist is an error either way
mkdir -p "$W/d/into" "$W/d/into2" "$W/d/demo_into" || fail "setup d"
for spelling in into into2/; do
    (cd "$W/d" && "$RECON" "$DATA" -n 2 -q --device cpu -o "$spelling") >"$W/d.stdout" 2>"$W/d.stderr" \
        || { cat "$W/d.stderr" >&2; fail "d: -o $spelling failed"; }
    dir=${spelling%/}
    [ "$(ls -A "$W/d/$dir" | tr '\n' ' ')" = "good_recon.nii good_recon.png " ] \
        || { ls -A "$W/d/$dir" >&2; fail "d: -o $spelling did not write $dir/good_recon.nii and .png"; }
    grep -q "wrote $dir/good_recon.nii" "$W/d.stdout" || { cat "$W/d.stdout" >&2; fail "d: -o $spelling: no 'wrote' line"; }
done
[ "$(ls -A "$W/d" | tr '\n' ' ')" = "demo_into into into2 " ] || { ls -A "$W/d" >&2; fail "d: files written beside the folders"; }
(cd "$W/d" && "$RECON" --demo --demo-size 32 --demo-slices 1 --demo-coils 2 -n 2 -q --device cpu -o demo_into) \
    >"$W/d.stdout" 2>"$W/d.stderr" || { cat "$W/d.stderr" >&2; fail "d: --demo -o demo_into failed"; }
[ -s "$W/d/demo_into/demo_corrected.nii" ] && [ -s "$W/d/demo_into/demo.h5" ] \
    || { ls -A "$W/d/demo_into" >&2; fail "d: --demo -o demo_into did not write demo_into/demo_*"; }
[ "$(ls -A "$W/d" | tr '\n' ' ')" = "demo_into into into2 " ] || { ls -A "$W/d" >&2; fail "d: the demo wrote beside its folder"; }
for spelling in missing/ missing/x; do
    (cd "$W/d" && "$RECON" "$DATA" -n 2 -q --device cpu -o "$spelling") >"$W/d.stdout" 2>"$W/d.stderr"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$W/d.stderr")" -eq 1 ] && grep -q "output folder 'missing' does not exist" "$W/d.stderr" \
        || { cat "$W/d.stderr" >&2; fail "d: -o $spelling: exit $rc, expected 2 naming the missing folder"; }
done
echo "ok  -o DIR and -o DIR/ (existing) write DIR/good_recon.nii and .png, --demo -o DIR writes DIR/demo_*; a missing folder is refused"

# 5. --report: written with the other outputs, replacing an earlier report; a report that cannot be written is
#    refused before anything is computed (exit 2, one line, no output); a run that fails writes no report
mkdir -p "$W/e/report.json.d" || fail "setup e"
echo "earlier" >"$W/e/r.json"
(cd "$W/e" && "$RECON" "$DATA" -n 2 -q --device cpu -o mine --report r.json) >"$W/e.stdout" 2>"$W/e.stderr" \
    || { cat "$W/e.stderr" >&2; fail "e: run with --report failed"; }
[ "$(report_get "$W/e/r.json" mode)" = file ] || fail "e: the report was not written over the earlier one"
grep -q 'wrote r.json (replaced an existing file)' "$W/e.stdout" || { cat "$W/e.stdout" >&2; fail "e: no note that r.json was replaced"; }
[ "$(ls -A "$W/e" | tr '\n' ' ')" = "mine.nii mine.png r.json report.json.d " ] || { ls -A "$W/e" >&2; fail "e: files left behind"; }
for bad in "missing/r.json|folder 'missing' does not exist" "report.json.d|exists and is a folder" \
           "mine.nii|--report 'mine.nii' and -o 'mine.nii' name the same file"; do
    spec=${bad%%|*}; want=${bad#*|}
    rm -f "$W/e/mine.nii" "$W/e/mine.png" "$W/e/r.json"
    (cd "$W/e" && "$RECON" "$DATA" -n 2 -q --device cpu -o mine --report "$spec") >"$W/e.stdout" 2>"$W/e.stderr"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$W/e.stderr")" -eq 1 ] && grep -qF -- "$want" "$W/e.stderr" \
        || { cat "$W/e.stderr" >&2; fail "e: --report $spec: exit $rc, expected 2 and one line saying '$want'"; }
    [ "$(ls -A "$W/e" | tr '\n' ' ')" = "report.json.d " ] || { ls -A "$W/e" >&2; fail "e: --report $spec left files"; }
done
(cd "$W/e" && "$RECON" "$DATA" -n 2 -q --device cpu -o mine --report r.json --operator fft --smaps missing.nii) \
    >"$W/e.stdout" 2>"$W/e.stderr" && fail "e: a run with a missing map file succeeded"
[ "$(ls -A "$W/e" | tr '\n' ' ')" = "report.json.d " ] || { ls -A "$W/e" >&2; fail "e: a failed run left a report"; }
echo "ok  --report replaces an earlier report; an unwritable report is refused up front; a failed run writes none"
