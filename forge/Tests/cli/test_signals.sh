#!/bin/bash
# A run stopped by SIGTERM or SIGINT while it writes its outputs leaves no temporary file behind and every
# earlier file as it was, and the signal still ends it (exit status 128 + signal). The window is made
# deterministic by FileUtil.h's test hook: FORGE_TEST_PAUSE_BEFORE_COMMIT=S pauses S seconds once every
# output is written under its temporary name and before the first rename. With strace, a run renames each
# output exactly once (a file is staged once, not once by the output set and again by its writer).
#   usage: test_signals.sh FORGE_RECON FIXTURES_PROGRAM WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$(readlink -f "$1"); FIXTURES=$(readlink -f "$2"); W=$(readlink -m "$3")
workdir "$W"
mkdir -p "$W/fixtures" && "$FIXTURES" "$W/fixtures" || fail "fixture program failed"
DATA=$W/fixtures/good.h5
set -m  # background jobs in their own process group, SIGINT not ignored (as for a job run from a terminal)

# signal NAME CODE DIR [report]: a paused run in DIR (-o DIR/out; with 'report', --report DIR/out.json too) is sent
# the signal while its outputs are staged
signal_during_write() {
    local sig=$1 code=$2 dir=$3 report=()
    [ "${4:-}" = report ] && report=(--report "$dir/out.json")
    local log=$W/$sig-$(basename "$dir")
    FORGE_TEST_PAUSE_BEFORE_COMMIT=60 "$RECON" "$DATA" -n 2 -q --device cpu -o "$dir/out" "${report[@]}" \
        >"$log.stdout" 2>"$log.stderr" &
    local pid=$! t=0
    until grep -q 'test hook: pausing' "$log.stderr" 2>/dev/null; do
        kill -0 $pid 2>/dev/null || { cat "$log.stderr" >&2; fail "$sig: the run ended before it paused (no test hook?)"; }
        sleep 0.1; t=$((t + 1))
        [ $t -lt 300 ] || { kill -KILL $pid; fail "$sig: no pause within 30 s"; }
    done
    local staged expected="out.nii.part$pid out.png.part$pid "
    staged=$(cd "$dir" && ls -A | grep '\.part' | tr '\n' ' ')
    [ ${#report[@]} -gt 0 ] && expected="out.json.part$pid $expected"
    [ "$staged" = "$expected" ] || fail "$sig: staged files '$staged' (expected $expected)"
    kill -"$sig" $pid
    wait $pid
    local rc=$?
    [ $rc -eq "$code" ] || { cat "$log.stderr" >&2; fail "$sig: exit status $rc, expected $code (ended by the signal)"; }
    echo "ok  $sig while writing: exit status $rc, staged: $staged"
}

mkdir -p "$W/term" "$W/int" "$W/replace" || fail "setup"
signal_during_write TERM 143 "$W/term"
[ -z "$(ls -A "$W/term")" ] || { ls -A "$W/term" >&2; fail "TERM: files left behind"; }
signal_during_write INT 130 "$W/int"
[ -z "$(ls -A "$W/int")" ] || { ls -A "$W/int" >&2; fail "INT: files left behind"; }

# with --report: the report is staged with the images and goes with them
mkdir -p "$W/report" || fail "setup report"
signal_during_write TERM 143 "$W/report" report
[ -z "$(ls -A "$W/report")" ] || { ls -A "$W/report" >&2; fail "TERM with --report: files left behind"; }

# an earlier out.nii survives byte for byte
head -c 4096 /dev/urandom >"$W/replace/out.nii" && cp "$W/replace/out.nii" "$W/replace/earlier" || fail "setup replace"
signal_during_write TERM 143 "$W/replace"
cmp -s "$W/replace/out.nii" "$W/replace/earlier" || fail "replace: the earlier out.nii was changed"
[ "$(ls -A "$W/replace" | tr '\n' ' ')" = "earlier out.nii " ] || { ls -A "$W/replace" >&2; fail "replace: files left behind"; }
echo "ok  TERM while writing over an earlier out.nii: unchanged, nothing else left"

# each output renamed into place once
if command -v strace >/dev/null 2>&1 && strace -f -qq -e trace=none true 2>/dev/null; then
    mkdir -p "$W/once" || fail "setup once"
    strace -f -qq -e trace=rename,renameat,renameat2 -o "$W/once.strace" \
        "$RECON" "$DATA" -n 2 -q --device cpu -o "$W/once/out" >/dev/null 2>"$W/once.stderr" \
        || { cat "$W/once.stderr" >&2; fail "once: run failed"; }
    n=$(grep -c 'rename' "$W/once.strace")
    [ "$n" -eq 2 ] || { cat "$W/once.strace" >&2; fail "once: $n renames for 2 outputs (a file staged twice?)"; }
    echo "ok  2 outputs, 2 renames"
else
    echo "skip: no usable strace for the rename count"
fi
